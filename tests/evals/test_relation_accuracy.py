"""`python -m evals relation-accuracy`: the shipped relation model's accuracy on labelled pairs."""

import json
import re
from types import SimpleNamespace

from typer.testing import CliRunner

from evals.__main__ import app
from pcm.config import load_context
from pcm.services import Services

PAIRS = [
    {
        "id": "a",
        "lang": "en",
        "memory": "I haven't eaten meat since I was a teenager.",
        "statement": "A grilled ribeye every Friday is my little ritual.",
        "label": "contradiction",
        "category": "diet_food",
    },
    {
        "id": "b",
        "lang": "en",
        "memory": "I work as a nurse on the pediatric ward.",
        "statement": "Rough night shift on the ward, three admissions back to back.",
        "label": "consistent",
        "kind": "routine",
    },
    {"id": "c", "lang": "zh", "memory": "我吃素好几年了。", "statement": "打算再养一只猫。", "label": "novel"},
]


def test_the_command_scores_each_pair_as_perception_judges_it(tmp_path, write_jsonl):
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["relation-accuracy", "--pairs", str(write_jsonl(tmp_path / "p.jsonl", PAIRS)), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    # the verdicts a turn gets at run time, one fact each, against the labels
    ctx = load_context()
    judge = Services(ctx).pair_judge(ctx)
    right = []
    for pair in PAIRS:
        verdict = judge(pair["statement"], [SimpleNamespace(id="m", content=pair["memory"])])["m"]
        right.append(max(verdict, key=verdict.get) == pair["label"])
    assert saved["all"] == {"accuracy": round(sum(right) / 3, 3), "pairs": 3}
    assert saved["lang"]["zh"]["pairs"] == 1 and saved["label"]["novel"]["accuracy"] == float(right[2])
    assert set(saved["kind"]) == {"diet_food", "routine", "unlabelled"}
    assert "| all | 3 |" in (out / "report.md").read_text(encoding="utf-8")


def test_a_malformed_pair_file_is_refused_and_nothing_is_written(tmp_path, write_jsonl):
    bad = write_jsonl(tmp_path / "bad.jsonl", [PAIRS[0], {**PAIRS[1], "label": "maybe"}])
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["relation-accuracy", "--pairs", str(bad), "--out", str(out)])
    assert result.exit_code != 0 and "bad.jsonl:2" in re.sub(r"[\s│╭╮╰╯─]", "", result.output)
    assert not out.exists()
