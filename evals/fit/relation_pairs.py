"""The relation model's training pairs (`training/relation_pairs/`) and the seeded draws made from
them: the group split, the added unrelated negatives, and the stable keys that both use (as do the
router's scenarios built from the pairs, `evals.fit.router_pairs`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from evals.jsonl import numbered_records
from pcm.perception.relation import RELATIONS

TRAINING_DIR = Path(__file__).resolve().parents[2] / "training" / "relation_pairs"


#: what every labelled pair holds (a training pair also names its group, area and kind)
REQUIRED = ("id", "lang", "memory", "statement", "label")


def load_pairs(*paths: Path) -> list[dict]:
    """The labelled pairs of each file (a folder: its .jsonl files in name order; by default the
    training pairs); a line that is not JSON, misses a field or has an unknown label is an error
    naming it."""
    files = [f for p in paths or (TRAINING_DIR,) for f in (sorted(p.glob("*.jsonl")) if p.is_dir() else [p])]
    pairs = []
    for file in files:
        for number, row in numbered_records(file):
            if any(k not in row for k in REQUIRED) or row["label"] not in RELATIONS:
                raise ValueError(f"{file}:{number}: needs {', '.join(REQUIRED)} and a label in {RELATIONS}")
            pairs.append(row)
    if not pairs:
        raise ValueError(f"no pairs in {', '.join(map(str, paths or (TRAINING_DIR,)))}")
    return pairs


def stable_key(seed: int, *parts: str) -> bytes:
    """A seeded pseudo-random sort key that depends only on `parts`. A draw ordered by it keeps what
    it drew when other items join or leave the pool (a seeded shuffle redraws everything), so an
    edit to the training pairs changes the fitted models only where it touches them."""
    return hashlib.sha256("\x1f".join((str(seed), *parts)).encode("utf-8")).digest()


def stable_number(seed: int, *parts: str) -> int:
    """`stable_key` as an integer in [0, 2⁶⁴): a seeded draw (a fraction, a fold) from `parts` alone."""
    return int.from_bytes(stable_key(seed, *parts)[:8], "big")


def split_groups(rows: list[dict], share: float, seed: int) -> tuple[set[str], set[str]]:
    """(kept, held-out) group names: `share` of the groups, the first by `stable_key`."""
    groups = sorted({r["group"] for r in rows}, key=lambda group: stable_key(seed, group))
    cut = int(len(groups) * share)
    return set(groups[cut:]), set(groups[:cut])


def with_negatives(rows: list[dict], held_out: set[str], seed: int) -> list[dict]:
    """The pairs plus, for each, its statement against another area's memory (same language and
    side of the split, the first by `stable_key`), labelled novel (kind `unrelated`)."""
    memories = {r["group"]: (r["memory"], r["area"], r["lang"]) for r in rows}
    negatives = []
    for r in rows:
        side = r["group"] in held_out
        candidates = [
            g
            for g, (_, area, lang) in memories.items()
            if area != r["area"] and lang == r["lang"] and (g in held_out) == side
        ]
        memory = memories[min(candidates, key=lambda group: stable_key(seed, r["id"], group))][0]
        negatives.append(dict(r, id=f"{r['id']}-unrelated", memory=memory, label="novel", kind="unrelated"))
    return rows + negatives
