"""`python -m evals speech-acts`: how the request guard reads labelled turns that ask something."""

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from evals.__main__ import app
from evals.bench.speech_acts import load_speech_acts, request_reads

TURNS = [
    {"id": "a", "lang": "en", "kind": "tell_then_ask", "tells": "yes", "text": "Moved to Oslo in May, any café tips?"},
    {"id": "b", "lang": "en", "kind": "pure_request", "tells": "no", "text": "What's a good podcast?"},
    {"id": "c", "lang": "en", "kind": "embedded", "tells": "yes", "text": "What size crate does my new beagle need?"},
    {"id": "d", "lang": "zh", "kind": "hypothetical", "tells": "no", "text": "如果我每天只睡五个小时，身体会怎样"},
    {"id": "e", "lang": "en", "kind": "embedded", "tells": "borderline", "text": "What should I feed my dog?"},
]


def test_turns_that_tell_read_as_requests_and_turns_that_tell_nothing_read_as_statements_are_counted(
    tmp_path, write_jsonl
):
    results = request_reads(load_speech_acts(write_jsonl(tmp_path / "t.jsonl", TURNS)))
    assert results["turns"] == 5  # the borderline turn is read, not counted
    assert results["by_group"]["all"] == {
        "tells": 2,
        "tells_read_as_request": 1,  # the fact inside the question is lost
        "tells_nothing": 2,
        "read_as_statement": 1,  # a Chinese question with no question mark or 吗
    }
    assert (results["tells_read_as_request"], results["tells_nothing_read_as_statement"]) == (["c"], ["d"])
    assert results["by_group"]["kind embedded"]["tells"] == 1


def test_a_turn_without_a_label_is_an_error_naming_its_line_and_the_command_writes_nothing(tmp_path, write_jsonl):
    bad = write_jsonl(tmp_path / "bad.jsonl", [TURNS[0], {**TURNS[1], "tells": "maybe"}])
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["speech-acts", "--data", str(bad), "--out", str(out)])
    flat = re.sub(r"[\s│╭╮╰╯─]", "", result.output)
    assert result.exit_code != 0 and "bad.jsonl:2" in flat and "needstells" in flat
    assert not out.exists()


def test_the_command_writes_the_counts_per_file(tmp_path, write_jsonl):
    good = write_jsonl(tmp_path / "good.jsonl", TURNS)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["speech-acts", "--data", str(good), "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert written["files"][str(good)]["by_group"]["zh"]["read_as_statement"] == 1
    assert "| all | 2 | 1 | 2 | 1 |" in (out / "report.md").read_text(encoding="utf-8")


def test_the_speech_act_files_are_two_disjoint_halves():
    """evals/data/speech_acts_{dev,test}.jsonl: 320 turns that ask something, a third in Chinese, written by a
    helper that saw no code or data, shuffled and cut in two; the dev half's errors were read while the request
    guard was changed, the test half's never."""
    data = Path(__file__).resolve().parents[2] / "evals" / "data"
    dev, test = (load_speech_acts(data / f"speech_acts_{half}.jsonl") for half in ("dev", "test"))
    assert (len(dev), len(test)) == (160, 160)
    assert not {r["text"] for r in dev} & {r["text"] for r in test}
