"""Entity extraction against labelled turns: does `named_entities` find the people, pets, places,
organisations, products, events and titles a turn names, and nothing else?

Each line of the data file is {"id", "lang", "source", "text", "entities": [{"name", "type"}]},
labelled by annotators who did not see the code. An extracted name is correct when it equals a
labelled name once both are lower-cased and stripped of a trailing "'s" (`entity_key`). Where the
item comes from a LoCoMo conversation, its two speakers are known names, as they are in a memory. Figures are
micro-averaged precision, recall and F1, overall and per language, for the entity nodes' extractor
(`named_entities`) and, as the baseline, the extractor the entity nodes used before
(`extract_entities`, still profiling's keywords), run in the same process on the same file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evals.bench.metrics import precision_recall_f1
from evals.jsonl import numbered_records
from pcm.datasets.locomo import load_locomo
from pcm.world.names import KnownName, entity_key, known_names, named_entities
from pcm.world.text import extract_entities

REQUIRED = ("id", "lang", "text", "entities")
EXTRACTORS: dict[str, Callable[[str, KnownName], list[str]]] = {
    "named_entities": named_entities,
    "extract_entities (before)": lambda text, known: extract_entities(text),
}


def load_entity_items(path: str | Path) -> list[dict]:
    """Read a labelled entity JSONL file; a malformed line is an error naming it."""
    rows = []
    for number, row in numbered_records(path):
        if any(k not in row for k in REQUIRED) or not all("name" in e for e in row["entities"]):
            raise ValueError(f"{path}:{number}: needs {', '.join(REQUIRED)}, each entity with a name")
        rows.append(row)
    return rows


def speakers_by_conversation(locomo: str | Path) -> dict[str, list[str]]:
    """The two speakers of each LoCoMo conversation, by sample id ("conv-26")."""
    return {c.sample_id: [c.speaker_a, c.speaker_b] for c in load_locomo(locomo)}


def item_speakers(item: dict, speakers: dict[str, list[str]]) -> list[str]:
    """The speakers of the conversation an item was taken from ("locomo:conv-26:D5:16"), if known."""
    parts = str(item.get("source", "")).split(":")
    return speakers.get(parts[1], []) if len(parts) > 1 and parts[0] == "locomo" else []


def score_item(item: dict, extracted: list[str]) -> dict:
    """One item's matches: the extracted and labelled keys, what was right, missed and wrong."""
    found = list(dict.fromkeys(entity_key(n) for n in extracted if entity_key(n)))
    gold = list(dict.fromkeys(entity_key(e["name"]) for e in item["entities"]))
    return {
        "id": item["id"],
        "lang": item["lang"],
        "correct": [k for k in found if k in gold],
        "wrong": [k for k in found if k not in gold],
        "missed": [k for k in gold if k not in found],
    }


def summarise(records: list[dict]) -> dict:
    """Micro precision, recall and F1 over the records, overall and per language."""

    def figures(rows: list[dict]) -> dict:
        correct = sum(len(r["correct"]) for r in rows)
        extracted = correct + sum(len(r["wrong"]) for r in rows)
        labelled = correct + sum(len(r["missed"]) for r in rows)
        return {
            "items": len(rows),
            "labelled": labelled,
            "extracted": extracted,
            "correct": correct,
            **precision_recall_f1(correct, extracted, labelled),
        }

    languages = sorted({r["lang"] for r in records})
    return {"all": figures(records), **{lang: figures([r for r in records if r["lang"] == lang]) for lang in languages}}


def run_entities(items: list[dict], speakers: dict[str, list[str]] | None = None) -> dict:
    """Every extractor over the same items (the speakers of an item's conversation known, where
    `speakers` has them): its figures and its per-item records."""
    results = {}
    for name, extract in EXTRACTORS.items():
        records = [
            score_item(item, extract(item["text"], known_names(item_speakers(item, speakers or {})))) for item in items
        ]
        results[name] = {"figures": summarise(records), "records": records}
    return results


def report(results: dict, show_errors: bool) -> str:
    """Markdown: one row per extractor and language; the new extractor's errors when asked."""
    lines = [
        f"# Entity extraction: {results['data']} ({results['items']} items, {results['date']})",
        "",
        "Micro-averaged over extracted and labelled names (case and a trailing 's aside).",
        "",
        "| extractor | language | items | labelled | extracted | correct | precision | recall | F1 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, run in results["extractors"].items():
        for lang, f in run["figures"].items():
            lines.append(
                f"| {name} | {lang} | {f['items']} | {f['labelled']} | {f['extracted']} | {f['correct']} | "
                f"{f['precision']:.3f} | {f['recall']:.3f} | {f['f1']:.3f} |"
            )
    if show_errors:
        lines += ["", "## named_entities: errors per item", ""]
        for r in results["extractors"]["named_entities"]["records"]:
            if r["wrong"] or r["missed"]:
                lines.append(f"- {r['id']}: wrong {r['wrong']}, missed {r['missed']}")
    return "\n".join(lines) + "\n"
