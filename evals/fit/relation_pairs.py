"""The relation model's training pairs (`training/relation_pairs/`) and the seeded draws made from
them: the group split, the added unrelated negatives, and the stable keys that both use (as do the
router's scenarios built from the pairs, `evals.fit.router_pairs`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pcm.perception.relation import RELATIONS

TRAINING_DIR = Path(__file__).resolve().parents[2] / "training" / "relation_pairs"


def load_pairs(folder: Path = TRAINING_DIR) -> list[dict]:
    rows = [
        json.loads(line)
        for file in sorted(folder.glob("*.jsonl"))
        for line in file.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    for row in rows:
        if row.get("label") not in RELATIONS:
            raise ValueError(f"pair {row.get('id')}: unknown label {row.get('label')!r}")
    return rows


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
