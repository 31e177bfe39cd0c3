"""The perfect-judge replay (`python -m evals llm-headroom`): where the cascade asks, the label answers."""

import json

from typer.testing import CliRunner

from evals.__main__ import app
from evals.bench.llm_headroom import PerfectJudge, measure_headroom
from pcm.models import NodeType, RetrievedMemory

SCENARIOS = [
    {
        "id": "h-implicit",
        "lang": "en",
        "history": ["I live in Lyon.", "Any good films this week?"],
        "probe": "Unpacking boxes in our new Porto flat, the light here is amazing.",
        "expected_level": "high",
        "query": "Where does the user live?",
        "current": "Porto",
        "outdated": "Lyon",
    },
    {
        "id": "h-low",
        "lang": "en",
        "history": ["I keep bees in my garden."],
        "probe": "Checked the hives again this morning, the bees are calm.",
        "expected_level": "low",
        "query": "What does the user keep?",
        "current": "bees",
        "outdated": None,
    },
]


def memory(node_id, content):
    return RetrievedMemory(
        id=node_id,
        content=content,
        type=NodeType.FACT,
        domain=None,
        weight=0.8,
        similarity=0.5,
        intent_relevance=1.0,
        score=0.5,
    )


def test_the_judge_answers_probes_from_their_labels_and_nothing_else():
    judge = PerfectJudge(SCENARIOS)
    verdict = judge(SCENARIOS[0]["probe"], [memory("a", "I live in Lyon."), memory("b", "Any good films this week?")])
    assert verdict.relation == "contradiction" and verdict.conflicting_ids == ["a"] and verdict.supported_ids == []
    confirmed = judge(SCENARIOS[1]["probe"], [memory("c", "I keep bees in my garden.")])
    assert confirmed.relation == "consistent" and confirmed.supported_ids == ["c"]
    assert judge("Any good films this week?", [memory("a", "I live in Lyon.")]) is None  # not a probe
    assert judge(SCENARIOS[0]["probe"], []) is None  # nothing to judge
    assert judge.asked == {"turns": 3, "probes": 2}
    offline = PerfectJudge(SCENARIOS, answers=False)
    assert offline(SCENARIOS[0]["probe"], [memory("a", "I live in Lyon.")]) is None and offline.asked["turns"] == 1


def test_asked_on_every_probe_the_perfect_judge_routes_each_and_revises_the_implicit_move(tmp_path, ctx):
    path = tmp_path / "dev.jsonl"
    path.write_text("\n".join(json.dumps(s) for s in SCENARIOS) + "\n")
    offline, perfect = measure_headroom(path, ctx, [1.01])  # above any probability: every turn is asked
    assert perfect["routing_accuracy"] == 1.0 and perfect["current_over_outdated"] == 1.0
    assert perfect["asked_probes"] == 2 and perfect["low_routed_to_correction"] == 0
    assert offline["asked_probes"] is None and offline["asked_turns"] == perfect["asked_turns"] >= 2
    assert offline["turns"] == perfect["turns"] == 5


def test_cli_writes_the_report(tmp_path):
    path = tmp_path / "dev.jsonl"
    path.write_text(json.dumps(SCENARIOS[1]) + "\n")
    out = tmp_path / "out"
    for bad in ("high", "0,-1"):
        refused = CliRunner().invoke(app, ["llm-headroom", "--data", str(path), "--confidence", bad, "--out", str(out)])
        assert refused.exit_code != 0 and "--confidence" in refused.output and not out.exists()
    result = CliRunner().invoke(app, ["llm-headroom", "--data", str(path), "--confidence", "0.6", "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = json.loads((out / "results.json").read_text())["rows"]
    assert [r["judge"] for r in rows] == ["offline (asked, no answer)", "perfect"]
    assert "| dev.jsonl | 0.6 | perfect |" in (out / "report.md").read_text()
