"""`python -m evals entities`: precision and recall of the entity nodes' extractor on labelled turns."""

from __future__ import annotations

import pytest

from evals.bench.entities import load_entity_items, run_entities, score_item


def test_items_are_scored_case_and_possessive_aside(tmp_path):
    item = {"id": "a", "lang": "en", "text": "x", "entities": [{"name": "Fox Hollow"}, {"name": "Pixie"}]}
    record = score_item(item, ["fox hollow", "Pixie's", "Yeah"])
    assert record["correct"] == ["fox hollow", "pixie"] and record["wrong"] == ["yeah"] and record["missed"] == []


def test_run_entities_gives_each_extractor_precision_and_recall_per_language(tmp_path, write_jsonl):
    data = tmp_path / "entities.jsonl"
    write_jsonl(
        data,
        [
            {
                "id": "1",
                "lang": "en",
                "source": "locomo:conv-x:D1:1",
                "text": "Yeah, Andrew took Pixie to Fox Hollow.",
                "entities": [{"name": "Andrew"}, {"name": "Pixie"}, {"name": "Fox Hollow"}],
            },
            {"id": "2", "lang": "en", "text": "Sometimes it rains. Got it!", "entities": []},
            {
                "id": "3",
                "lang": "zh",
                "text": "我跟李明去杭州西湖了。",
                "entities": [{"name": "李明"}, {"name": "杭州"}, {"name": "西湖"}],
            },
        ],
    )
    results = run_entities(load_entity_items(data), {"conv-x": ["Andrew", "Audrey"]})
    named = results["named_entities"]["figures"]
    assert named["en"]["labelled"] == 3 and named["en"]["correct"] == 3 and named["en"]["precision"] == 1.0
    assert named["zh"]["recall"] == 1.0
    before = results["extract_entities (before)"]["figures"]["all"]
    assert before["precision"] < named["all"]["precision"]  # the old extractor took "Yeah", "Sometimes", "Got"


def test_a_malformed_line_is_an_error_naming_it(tmp_path):
    data = tmp_path / "bad.jsonl"
    data.write_text('{"id": "1", "lang": "en", "text": "x", "entities": []}\n{"id": 2}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="bad.jsonl:2"):
        load_entity_items(data)
