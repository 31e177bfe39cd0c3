"""The relation model's training pairs (`training/relation_pairs/`) hold what issue 8 asks of them
and stay apart from the evaluation files."""

import json
from collections import Counter
from pathlib import Path

from evals.fit.relation_pairs import load_pairs

ROOT = Path(__file__).resolve().parents[2]
AREAS = {"work", "city", "diet", "health", "family", "pets", "hobbies", "tools", "study", "money", "travel",
         "assistant"}
EVALUATION_FILES = ("scenarios_test.jsonl", "scenarios_blind.jsonl", "followups_blind.jsonl")


def _texts(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)


def test_training_pairs_cover_the_areas_languages_and_kinds_asked_for():
    pairs = load_pairs()
    assert len(pairs) >= 3000
    assert len({p["id"] for p in pairs}) == len(pairs)
    languages = Counter(p["lang"] for p in pairs)
    assert languages["zh"] / len(pairs) >= 0.2
    assert AREAS <= {p["area"] for p in pairs}
    contradictions = [p for p in pairs if p["label"] == "contradiction"]
    assert sum(p["kind"] == "implicit" for p in contradictions) / len(contradictions) >= 0.45
    kinds = Counter(p["kind"] for p in pairs)
    assert kinds["trap"] >= 300 and kinds["near_miss"] >= 300
    # a trap is a change word that revises nothing: never labelled a contradiction
    assert not [p["id"] for p in pairs if p["kind"] == "trap" and p["label"] == "contradiction"]
    # every group judges one memory
    memories: dict[str, set[str]] = {}
    for p in pairs:
        memories.setdefault(p["group"], set()).add(p["memory"])
    assert all(len(m) == 1 for m in memories.values())


def test_no_training_text_is_a_message_of_an_independent_evaluation_file():
    evaluated = set()
    for name in EVALUATION_FILES:
        for line in (ROOT / "evals" / "data" / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                evaluated.update(t.strip().lower() for t in _texts(json.loads(line)) if len(t) > 12)
    shared = [p["id"] for p in load_pairs() for text in (p["memory"], p["statement"])
              if text.strip().lower() in evaluated]
    assert shared == []
