"""The follow-up benchmark: file validation and what each system's summary counts."""

import json

import pytest

from evals.bench.followups import load_followups, report, run_followups

ITEMS = [
    {
        "id": "r1",
        "lang": "en",
        "kind": "revision",
        "history": ["I live in Lyon, near the old town."],
        "probe": "We moved to Porto last month, still unpacking boxes.",
        "followups": ["The bakeries back in Lyon were unbeatable."],
        "query": "Where does the user live?",
        "current": "Porto",
        "outdated": "old town",
    },
    {
        "id": "s1",
        "lang": "en",
        "kind": "still_true",
        "history": ["I work as a nurse on a pediatric ward."],
        "probe": "When I was little I wanted to be a vet.",
        "followups": ["Another long shift with the kids on the ward today."],
        "query": "What does the user do?",
        "current": "pediatric ward",
        "outdated": None,
    },
]


def test_a_malformed_followup_file_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps(ITEMS[0]) + "\n" + json.dumps({**ITEMS[0], "outdated": None}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"f.jsonl:2"):
        load_followups(path)
    path.write_text(json.dumps(ITEMS[1]) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"f.jsonl:2: not JSON"):
        load_followups(path)


def test_followups_summarise_each_system_per_kind_from_its_records(tmp_path, ctx):
    path = tmp_path / "f.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in ITEMS), encoding="utf-8")
    results = run_followups(load_followups(path), ctx, progress=False)
    assert set(results["systems"]) == {"pcm", "pcm-no-reaffirm", "dense"}
    for name, kinds in results["systems"].items():
        rows = results["records"][name]
        assert [r["id"] for r in rows] == ["r1", "s1"]
        for kind in ("revision", "still_true"):
            record = next(r for r in rows if r["kind"] == kind)
            assert kinds[kind]["items"] == 1 and kinds[kind]["holds"] == float(record["holds"])
            assert kinds[kind]["reaffirmed"] == float(record["reaffirmed"])
    assert results["records"]["pcm-no-reaffirm"][0]["reaffirmed"] is False
    results.update(data=str(path), items=2, date="2026-11-26")
    assert "| pcm-no-reaffirm | revision | 1 |" in report(results)
