"""The `pcm` command line as a user runs it."""

import json
import sqlite3

from typer.testing import CliRunner

from pcm.cli import app

runner = CliRunner()


def test_demo_json_runs_the_walkthrough_offline(tmp_path):
    result = runner.invoke(app, ["demo", "--json", "--data-dir", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    run = json.loads(result.stdout)
    assert [t["input"] for t in run["turns"]][2].startswith("Lately I've been learning about Transformers")
    for turn in run["turns"]:
        assert set(turn) >= {"input", "s_raw", "retrieval_entropy", "s_eff", "level", "agent", "changes"}
        assert turn["level"] in ("low", "medium", "high")
    assert {m["type"] for m in run["memory"]} >= {"fact"}
    assert [t["level"] for t in run["turns"]] == ["low", "low", "medium", "high", "low"]
    contents = [hit["content"] for hit in run["retrieval"]]
    research = next(i for i, c in enumerate(contents) if "AI researcher" in c)
    backend = next((i for i, c in enumerate(contents) if "Python backend developer" in c), len(contents))
    assert research < backend


def test_ingest_then_inspect_memory(tmp_path):
    messages = tmp_path / "chat.json"
    messages.write_text(
        json.dumps(
            [
                {"role": "user", "content": "I keep bees in my garden in Leeds."},
                {"role": "user", "content": "The bees made 12 jars of honey this year."},
            ]
        )
    )
    data = str(tmp_path / "data")
    result = runner.invoke(app, ["ingest", str(messages), "--data-dir", data, "--user", "beekeeper"])
    assert result.exit_code == 0, result.output
    assert "ingested 2 turns" in result.stdout
    listed = runner.invoke(app, ["memory", "list", "--data-dir", data, "--user", "beekeeper"])
    assert listed.exit_code == 0 and "bees" in listed.stdout
    exported = runner.invoke(app, ["memory", "export", "--data-dir", data, "--user", "beekeeper"])
    graph = json.loads(exported.stdout)["graph"]
    assert any("Leeds" in node["content"] for node in graph["nodes"])
    node_id = next(n["id"] for n in graph["nodes"] if "honey" in n["content"])
    shown = runner.invoke(app, ["memory", "show", node_id, "--data-dir", data, "--user", "beekeeper"])
    assert shown.exit_code == 0 and "honey" in shown.stdout


def test_user_mistakes_are_one_line_errors(tmp_path):
    data = str(tmp_path / "data")
    unknown = runner.invoke(app, ["memory", "list", "--data-dir", data, "--user", "ghost"])
    assert unknown.exit_code == 2
    assert "no memory for user 'ghost'" in unknown.stderr and "Traceback" not in unknown.output
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe not utf-8")
    result = runner.invoke(app, ["ingest", str(bad), "--data-dir", data])
    assert result.exit_code == 2 and "not valid UTF-8" in result.stderr
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps([{"role": "user", "content": "  "}]))
    result = runner.invoke(app, ["ingest", str(empty), "--data-dir", data, "--user", "someone"])
    assert result.exit_code == 2 and "message 1: user_input is empty" in result.stderr
    with sqlite3.connect(tmp_path / "data" / "memory.sqlite") as db:  # the rejected files stored nothing
        assert db.execute("SELECT COUNT(*) FROM pcm_users").fetchone()[0] == 0
