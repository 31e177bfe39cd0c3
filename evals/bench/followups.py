"""Turns after a revision or a look-alike: does a later turn undo a real revision, and does a later
confirmation give back a fact that a false correction retired?

Each item is a short history stating a fact, a probe, and one or two follow-up turns, then a
query about the fact:
- kind "revision": the probe revises the fact, the follow-ups mention the old state without undoing
  the revision (nostalgia, past tense). Measured: the memory holding `current` still ranks above
  every memory holding `outdated` after the follow-ups (current-over-outdated), and how often a
  follow-up reaffirmed the superseded fact (it should not).
- kind "still_true": the probe looks like a change but is not one, the follow-ups confirm the fact.
  Measured: the memory holding `current` (the still-true fact) ranks first after the follow-ups,
  how often the probe was (falsely) corrected, and how often a follow-up reaffirmed the fact.

PCM runs with and without reaffirmation (`reaffirm_threshold` None) over the same items in one
process, each in its own temporary memory on the fixed replay clock, with the dense baseline
(MiniLM over the raw messages) alongside.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from langgraph.checkpoint.memory import InMemorySaver
from tqdm import tqdm

from evals.bench.scenarios import current_wins, dense_baseline_contents, replay_moment, standing_first
from evals.jsonl import numbered_records
from pcm.api import PCM
from pcm.config import PCMContext
from pcm.services import Services
from pcm.world.supersession import REAFFIRMS, SUPERSEDES

KINDS = ("revision", "still_true")
REQUIRED = ("id", "kind", "history", "probe", "followups", "query", "current")


def load_followups(path: str | Path) -> list[dict]:
    """Read a follow-up JSONL file; a malformed line is an error naming it."""
    rows = []
    for number, row in numbered_records(path):
        missing = [k for k in REQUIRED if k not in row]
        if missing or row["kind"] not in KINDS or (row["kind"] == "revision" and not row.get("outdated")):
            raise ValueError(
                f"{path}:{number}: needs {', '.join(REQUIRED)}, kind in {KINDS}, and `outdated` "
                f"for a revision (missing: {missing or 'none'})"
            )
        rows.append(row)
    return rows


def replay(items: list[dict], ctx: PCMContext, services: Services, progress: bool = True) -> list[dict]:
    """One record per item: the probe's branch, supersessions and reaffirmations made, and the
    measure of its kind after the follow-ups."""
    records = []
    with tempfile.TemporaryDirectory(prefix="pcm-followups-") as folder:
        ctx = ctx.replace(data_dir=folder)
        pcm = PCM(ctx, services.with_context(ctx), checkpointer=InMemorySaver())
        for item in tqdm(items, desc="followups", disable=None if progress else True):
            user = f"followup-{item['id']}"
            messages = [*item["history"], item["probe"], *item["followups"]]
            agents = [pcm.process(m, user_id=user, timestamp=replay_moment(i))["agent"] for i, m in enumerate(messages)]
            graph = pcm.memory(user)
            relations = [e.relation for e in graph.edges()]
            contents = [m.content for m in pcm.search(item["query"], user_id=user, top_k=20)]
            records.append(
                {
                    "id": item["id"],
                    "lang": item.get("lang", "en"),
                    "kind": item["kind"],
                    "probe_agent": agents[len(item["history"])],
                    "superseded": SUPERSEDES in relations,
                    "reaffirmed": REAFFIRMS in relations,
                    "holds": _holds(contents, item),
                }
            )
    return records


def _holds(contents: list[str], item: dict) -> bool:
    if item["kind"] == "revision":
        return current_wins(contents, item["current"], item["outdated"])
    return standing_first(contents, item)


def _share(flags: list[bool]) -> float | None:
    return float(np.mean(flags)) if flags else None


def summarise(records: list[dict]) -> dict:
    """Per kind: the share of items whose measure holds (overall and per language), the probe's
    corrections and the follow-ups' reaffirmations."""
    out = {}
    for kind in KINDS:
        rows = [r for r in records if r["kind"] == kind]
        out[kind] = {
            "items": len(rows),
            "holds": _share([r["holds"] for r in rows]),
            "holds_per_language": {
                lang: _share([r["holds"] for r in rows if r["lang"] == lang])
                for lang in sorted({r["lang"] for r in rows})
            },
            "probe_corrected": _share([r["probe_agent"] == "correction" for r in rows]),
            "reaffirmed": _share([r["reaffirmed"] for r in rows]),
        }
    return out


def run_followups(items: list[dict], ctx: PCMContext, services: Services | None = None, progress: bool = True) -> dict:
    """PCM, PCM without reaffirmation and the dense baseline over the same items."""
    services = services or Services(ctx)
    variants = {"pcm": ctx, "pcm-no-reaffirm": ctx.replace(reaffirm_threshold=None)}
    records = {name: replay(items, variant, services, progress) for name, variant in variants.items()}
    dense = [
        {
            "id": i["id"],
            "lang": i.get("lang", "en"),
            "kind": i["kind"],
            "probe_agent": None,
            "superseded": False,
            "reaffirmed": False,
            "holds": _holds(
                dense_baseline_contents(services, [*i["history"], i["probe"], *i["followups"]], i["query"]), i
            ),
        }
        for i in items
    ]
    records["dense"] = dense
    return {"systems": {name: summarise(rows) for name, rows in records.items()}, "records": records}


def report(results: dict) -> str:
    """Markdown: one row per system and kind."""
    lines = [
        f"# Follow-up turns: {results['data']} ({results['items']} items, {results['date']})",
        "",
        "revision: current-over-outdated after the follow-ups; still_true: the still-true fact first "
        "after them. Probe corrected: the probe went to correction (right for a revision, a false "
        "alarm for a still-true fact). Reaffirmed: a follow-up overturned a supersession.",
        "",
        "| system | kind | items | holds | en / zh | probe corrected | reaffirmed |",
        "|---|---|---|---|---|---|---|",
    ]

    def fmt(value):
        return "—" if value is None else f"{value:.2f}"

    for name, kinds in results["systems"].items():
        for kind, row in kinds.items():
            languages = " / ".join(fmt(row["holds_per_language"].get(lang)) for lang in ("en", "zh"))
            lines.append(
                f"| {name} | {kind} | {row['items']} | {fmt(row['holds'])} | {languages} | "
                f"{fmt(row['probe_corrected']) if name != 'dense' else '—'} | "
                f"{fmt(row['reaffirmed']) if name != 'dense' else '—'} |"
            )
    return "\n".join(lines) + "\n"
