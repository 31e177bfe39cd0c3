"""Input that cannot poison state: every field of a turn, every entry point.

Each bad value gets a ValueError that names the field, and nothing changes: long-term
memory, working memory, and the next turns of the thread (the served graph checks input
on its entry edge, so a rejected turn leaves nothing a later turn could inherit).
"""

import json
import math
import re
import time
from datetime import datetime, timedelta, timezone

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from typer.testing import CliRunner

from pcm.api import PCM
from pcm.cli import app
from pcm.graph import build_graph
from pcm.models import NodeType, as_utc, utcnow
from pcm.services import Services
from pcm.world.names import named_entities
from pcm.world.text import extract_entities

GOOD = "I keep bees in my garden in Leeds."

BAD_TURNS = [
    ({"text": ""}, "user_input is empty"),
    ({"text": "   "}, "user_input is empty"),
    ({"text": "x" * 1_000_000}, "limit is"),
    ({"text": "a\x00b"}, "NUL"),
    ({"text": "broken \ud800 text"}, "user_input contains a lone surrogate"),
    ({"text": 42}, "user_input must be a string"),
    ({"text": "\u200b\u200b\u2060"}, "user_input is empty: it holds no visible character"),
    ({"text": " \u3164\ufeff "}, "user_input is empty: it holds no visible character"),
    ({"user_id": ""}, "user_id"),
    ({"user_id": 42}, "user_id"),
    ({"user_id": "x" * 300}, "user_id"),
    ({"user_id": "ab\ud800"}, "user_id contains a lone surrogate"),
    ({"speaker": 42}, "speaker must be a string"),
    ({"speaker": "x" * 500}, "speaker has 500 characters"),
    ({"speaker": "Ann\ud800"}, "speaker contains a lone surrogate"),
    ({"speaker": "A\x01nn"}, "speaker must not contain control characters"),
    ({"timestamp": "yesterday-ish"}, "timestamp 'yesterday-ish' is not an ISO 8601 time"),
    ({"timestamp": "2024-13-45T10:00:00"}, "not an ISO 8601 time"),
    ({"timestamp": 1700000000}, "timestamp must be an ISO 8601 string"),
    ({"timestamp": "9999-12-31T23:59:59"}, "timestamp 9999-12-31T23:59:59+00:00 is ahead of this server's clock"),
    (
        {"timestamp": "9999-12-31T23:00:00-05:00"},
        "timestamp '9999-12-31T23:00:00-05:00' is not an ISO 8601 time that UTC can hold",
    ),
    ({"timestamp": "0001-01-01T00:00:00+05:00"}, "timestamp '0001-01-01T00:00:00+05:00' is not an ISO 8601 time"),
    ({"timestamp": "1850-06-01T00:00:00+00:00"}, "is before 1900-01-01"),
    ({"dialog_ids": "D1:1"}, "dialog_ids must be a list"),
    ({"dialog_ids": [1, 2]}, "dialog_ids must hold non-empty strings"),
    ({"dialog_ids": ["D1:1"] * 101}, "dialog_ids has 101 entries"),
    ({"force_level": "extreme"}, "force_level must be one of low, medium, high"),
    ({"force_level": 3}, "force_level must be one of"),
    ({"target_ids": ["m-000000000000"], "force_level": "high"}, "target_ids name no memory of this user"),
    ({"target_ids": ["m-000000000000"]}, "target_ids name memories to correct; they need force_level 'high'"),
    ({"target_ids": "m-000000000000", "force_level": "high"}, "target_ids must be a list"),
    ({"note": 5}, "note must be a string"),
]


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One PCM with one remembered turn; every bad turn is tried against it."""
    from pcm.config import load_context

    ctx = load_context(data_dir=str(tmp_path_factory.mktemp("input") / "data"))
    pcm = PCM(ctx, checkpointer=InMemorySaver())
    pcm.process(GOOD, user_id="u", timestamp="2024-05-08T13:56:00+00:00")
    return pcm


def snapshot(pcm: PCM) -> tuple:
    return json.dumps(pcm.memory("u").export(), sort_keys=True, default=str), pcm.state("u")


@pytest.mark.parametrize("fields,message", BAD_TURNS, ids=[m[:40] for _, m in BAD_TURNS])
def test_every_bad_field_is_a_clear_error_and_changes_nothing(shared, fields, message):
    before = snapshot(shared)
    arguments = {"user_id": "u", **fields}
    text = arguments.pop("text", "A perfectly fine sentence about my bees.")
    with pytest.raises(ValueError, match=re.escape(message)):
        shared.process(text, **arguments)
    assert snapshot(shared) == before


def test_a_rejected_turn_leaves_nothing_for_the_next_turns_of_a_served_thread(ctx):
    """The served graph gets input without PCM's own checks: a bad timestamp (or speaker,
    force level, unknown target) used to enter the thread and break every later turn."""
    services = Services(ctx)
    graph = build_graph(services, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "served"}}
    graph.invoke({"user_input": GOOD, "user_id": "s"}, config, context=ctx)
    memory_before = json.dumps(services.store.open("s").export(), sort_keys=True, default=str)
    for bad in (
        {"timestamp": "not a time"},
        {"speaker": 7},
        {"force_level": "extreme"},
        {"force_level": "high", "target_ids": ["m-000000000000"]},
        {"user_input": "oops \udc80"},
    ):
        with pytest.raises(ValueError):
            graph.invoke({"user_input": "Honey harvest is next week.", "user_id": "s", **bad}, config, context=ctx)
    assert json.dumps(services.store.open("s").export(), sort_keys=True, default=str) == memory_before
    out = graph.invoke({"user_input": "Honey harvest is next week.", "user_id": "s"}, config, context=ctx)
    assert out["turn"] == 2 and out["surprisal"]["level_source"] != "forced"
    window = graph.get_state(config).values["working_memory"]
    assert [t["content"] for t in window] == [GOOD, "Honey harvest is next week."]
    # no rejected timestamp reached the window: each turn, given none, was recorded when it was processed
    assert all(abs((utcnow() - as_utc(t["timestamp"])).total_seconds()) < 600 for t in window)


def test_search_needs_a_positive_top_k(pcm):
    pcm.process(GOOD, user_id="k")
    assert len(pcm.search("bees", user_id="k", top_k=1)) >= 1
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="top_k must be a whole number of at least 1"):
            pcm.search("bees", user_id="k", top_k=bad)


@pytest.mark.parametrize("extract", [extract_entities, named_entities])
def test_entity_extraction_is_bounded_on_pathological_text(extract):
    rare = "".join(chr(0x4E00 + (i * 7919) % 20901) for i in range(20000))  # characters jieba mostly lacks
    quotes = ('"' + "A " * 40) * 500 + "'It" * 2000 + " Fox" * 5000  # unclosed quotations, one long capitalised run
    extract("我住在上海。")  # jieba loads its dictionary on first use: not what is timed here
    for text in (rare, quotes):
        started = time.perf_counter()
        extract(text)
        assert time.perf_counter() - started < 2.0


def test_profiling_keywords_keep_their_extractor():
    assert extract_entities("我叫李明，住在上海，在阿里巴巴工作。I use FastAPI.")[:4] == [
        "李明",
        "上海",
        "阿里巴巴",
        "FastAPI",
    ]


runner = CliRunner()


def test_ingest_errors_are_one_line(tmp_path, monkeypatch):
    data = str(tmp_path / "data")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000)
    locomo = tmp_path / "conv-x.json"
    locomo.write_text(
        json.dumps(
            {
                "speaker_a": "Ann",
                "speaker_b": "Bo",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "Hi"}, {"speaker": "Bo", "text": "Hello"}],
                "qa": [],
            }
        )
    )
    big = tmp_path / "big.json"
    big.write_text(json.dumps([{"role": "user", "content": "hello"}] * 12_000))
    monkeypatch.setattr("pcm.ingest.MAX_FILE_BYTES", 300_000)  # the real cap is 20 MB
    expected = {
        folder: "is a folder",
        nested: "nested too deeply",
        locomo: "conversation conv-x: session 1, turn 2: missing 'dia_id'",
        big: "pcm ingest reads files of at most 300,000 bytes",
    }
    for path, message in expected.items():
        result = runner.invoke(app, ["ingest", str(path), "--data-dir", data])
        assert result.exit_code == 2, result.output
        assert message in result.stderr and "Traceback" not in result.output
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "data" / "users").exists()


def test_chat_reports_undecodable_input_and_goes_on(tmp_path, monkeypatch):
    """`pcm chat` reading non-UTF-8 stdin gets lone surrogates (surrogateescape) or a decode error."""
    lines = iter(["caf\udce9 au lait", UnicodeDecodeError("utf-8", b"\xe9", 0, 1, "invalid"), "I like green tea."])

    def fake_input(prompt=""):
        line = next(lines, None)
        if line is None:
            raise EOFError
        if isinstance(line, Exception):
            raise line
        return line

    monkeypatch.setattr("builtins.input", fake_input)
    result = runner.invoke(app, ["chat", "--data-dir", str(tmp_path / "data"), "--user", "tea"])
    assert result.exit_code == 0, result.output
    assert "lone surrogate" in result.stderr and "not valid UTF-8" in result.stderr
    assert "I like green tea." in result.stdout and "Traceback" not in result.output


def test_a_far_future_turn_cannot_decay_the_other_memories(pcm):
    """A turn dated 9999 used to decay every unconfirmed hypothesis of its user to 0 for good."""
    pcm.process("I might start learning the cello this winter.", user_id="f", force_level="medium")
    hypotheses = {n.id: n.weight for n in pcm.memory("f").nodes(types=[NodeType.HYPOTHESIS])}
    assert hypotheses
    with pytest.raises(ValueError, match="ahead of this server's clock by more than 24 hours"):
        pcm.process("Time travel is fun.", user_id="f", timestamp="9999-12-31T23:59:59")
    soon = (utcnow() + timedelta(hours=2)).isoformat()  # within the allowed skew
    pcm.process("My sister visits next week.", user_id="f", timestamp=soon)
    after = {n.id: n.weight for n in pcm.memory("f").nodes(types=[NodeType.HYPOTHESIS]) if n.id in hypotheses}
    assert all(after[i] >= w * 0.99 for i, w in hypotheses.items()), (hypotheses, after)


def test_decay_never_uses_more_time_than_the_clock_allows(pcm):
    """Even a caller that skips input validation cannot decay a hypothesis for more than the skew."""
    from pcm.evolution import TurnInfo
    from pcm.evolution.maintenance import decay_hypotheses

    pcm.process("I might start learning the cello this winter.", user_id="d", force_level="medium")
    graph = pcm.memory("d")
    hypothesis = graph.nodes(types=[NodeType.HYPOTHESIS])[0]
    info = TurnInfo(text="x", turn=9, thread_id=None, timestamp=datetime(9999, 12, 31, tzinfo=timezone.utc))
    with graph.lock:
        changes = decay_hypotheses(graph, info, [], pcm.ctx)
    allowed = math.exp(-pcm.ctx.gamma * (pcm.ctx.clock_skew_hours / 24 + 0.01))
    assert graph.weight(hypothesis.id) >= hypothesis.weight * allowed > 0.3 * hypothesis.weight
    assert all("unconfirmed for 1.0 days" in c.reason for c in changes)


def test_as_of_out_of_range_is_a_clear_error(pcm):
    pcm.process(GOOD, user_id="a")
    for moment in ("0001-01-01T00:00:00+05:00", "9999-12-31T23:00:00-05:00"):
        with pytest.raises(ValueError, match="as_of .* is not an ISO 8601 time that UTC can hold"):
            pcm.search("bees", user_id="a", as_of=moment)
    result = runner.invoke(
        app,
        [
            "memory",
            "show",
            "m-0",
            "--data-dir",
            pcm.ctx.data_dir,
            "--user",
            "a",
            "--as-of",
            "0001-01-01T00:00:00+05:00",
        ],
    )
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output


def test_ingest_keeps_messages_whose_ids_were_used_before(tmp_path):
    """A second export whose ids restart at 1 used to lose all its messages as "already stored"."""
    data = str(tmp_path / "data")
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_text(
        json.dumps(
            [
                {"id": i, "role": "user", "content": text}
                for i, text in enumerate(
                    ["I adopted a cat named Miso.", "I work at a bakery.", "My favourite colour is teal."], 1
                )
            ]
        )
    )
    second.write_text(
        json.dumps(
            [
                {"id": i, "role": "user", "content": text}
                for i, text in enumerate(
                    ["I bought a red kayak.", "My brother lives in Oslo.", "I play chess on Sundays."], 1
                )
            ]
        )
    )
    for path in (first, second, second):  # the last: a resumed run of the second
        result = runner.invoke(app, ["ingest", str(path), "--data-dir", data, "--user", "ids"])
        assert result.exit_code == 0, result.output
    assert "3 messages reuse ids stored before with other text (1, 2, 3)" not in result.stderr
    assert "3 already stored" in result.stdout
    listed = runner.invoke(app, ["memory", "export", "--data-dir", data, "--user", "ids"])
    contents = [n["content"] for n in json.loads(listed.stdout)["graph"]["nodes"] if n["type"] == "fact"]
    for text in ("Miso", "bakery", "teal", "kayak", "Oslo", "chess"):
        assert sum(text in c for c in contents) == 1, (text, contents)


def test_ingest_reports_reused_ids(tmp_path):
    from pcm.ingest import ingest_turns, read_conversation

    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_text(json.dumps([{"id": "a", "role": "user", "content": "I adopted a cat named Miso."}]))
    second.write_text(
        json.dumps(
            [
                {"id": "a", "role": "user", "content": "I bought a red kayak."},
                {"id": "b", "role": "user", "content": "I play chess on Sundays."},
            ]
        )
    )
    from pcm.config import load_context

    ctx = load_context(data_dir=str(tmp_path / "data"))
    pcm = PCM(ctx, checkpointer=InMemorySaver())
    assert ingest_turns(pcm, read_conversation(first, ctx), "r")["reused_ids"] == []
    assert ingest_turns(pcm, read_conversation(second, ctx), "r")["reused_ids"] == ["a"]
    again = ingest_turns(pcm, read_conversation(second, ctx), "r")
    assert again["reused_ids"] == [] and again["already_stored"] == 2


def test_ingest_encoding_errors_name_the_line(tmp_path):
    lone = tmp_path / "lone.json"
    lone.write_text('[{"role": "user", "content": "hello"},\n {"role": "user", "content": "bad \\ud800 text"}]')
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'[{"role": "user", "content": "hello"},\n {"role": "user", "content": "caf\xe9"}]')
    bad_id = tmp_path / "bad-id.json"
    bad_id.write_text('[{"role": "user", "content": "hello", "id": "x\\udc80"}]')
    expected = {
        lone: "line 2: the escape \\ud800 is half of a UTF-16 surrogate pair",
        latin: "line 2 is not valid UTF-8 (byte 72); save the file as UTF-8",
        bad_id: "line 1: the escape \\udc80 is half of a UTF-16 surrogate pair",
    }
    for path, message in expected.items():
        result = runner.invoke(app, ["ingest", str(path), "--data-dir", str(tmp_path / "data")])
        assert result.exit_code == 2 and message in result.stderr, result.output
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
