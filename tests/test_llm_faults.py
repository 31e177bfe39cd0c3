"""Turns against a faulty OpenAI-compatible endpoint on loopback (`tests/fault_server.py`): a
turn always completes, on the offline path where the LLM fails, within its deadline; every
attempt is counted; a failure is one log line; an invalid reply never becomes memory."""

import json
import logging
import time

import pytest
from fault_server import FaultServer
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from pcm.api import PCM
from pcm.services import Services

TEXT = "I moved to Lisbon last spring and I work at a small bakery there."


@pytest.fixture
def faults():
    with FaultServer(slow_seconds=30) as server:
        yield server


def llm_pcm(ctx, server, mode, **settings):
    settings = {"llm_intent_confidence": 1.0, "llm_turn_deadline": 3.0, **settings}
    return PCM(ctx.replace(llm_model="fault", llm_base_url=server.url(mode), **settings), checkpointer=InMemorySaver())


def one_line_warnings(caplog) -> list[str]:
    records = [r for r in caplog.records if r.name == "pcm.llm" and r.levelno >= logging.WARNING]
    assert all(r.exc_info is None and "\n" not in r.getMessage() for r in records)
    return [r.getMessage() for r in records]


def timed_turns(pcm, user, texts) -> tuple[list[dict], list[float]]:
    outs, seconds = [], []
    for text in texts:
        started = time.perf_counter()
        outs.append(pcm.process(text, user_id=user))
        seconds.append(time.perf_counter() - started)
    return outs, seconds


def test_a_dead_endpoint_costs_a_turn_at_most_its_deadline_then_the_breaker_skips_it(ctx, caplog):
    """The target: a turn on a dead endpoint ends within the deadline plus 1 s. The deadline
    bounds the time the turn spends on the LLM (`llm_usage.seconds`), here against a server
    that never answers within the 60-s call timeout; the rest of the turn is the offline path
    (a few tenths of a second on an idle machine: `make bench-latency`)."""
    texts = (TEXT, "The bakery opens at six every morning.", "I bake the sourdough myself.")
    deadline = 2.0
    with FaultServer(slow_seconds=90) as faults:
        pcm = llm_pcm(
            ctx,
            faults,
            "slow",
            llm_turn_deadline=deadline,
            llm_timeout=60.0,
            llm_breaker_failures=2,
            llm_cooldown=120.0,
        )
        pcm.services.warm_up()
        with caplog.at_level(logging.INFO, logger="pcm.llm"):
            (first, second, third), seconds = timed_turns(pcm, "d", texts)
        sent = faults.count("slow")
    for out, elapsed in zip((first, second, third), seconds):
        assert out["llm_usage"]["seconds"] <= deadline + 0.1
        assert elapsed < 30, seconds  # far below the 60-s call timeout
    assert first["llm_usage"]["seconds"] >= deadline - 0.1  # it did wait for the dead server
    assert third["llm_usage"]["seconds"] < 0.1  # circuit open: nothing sent, no wait
    assert sent == 2
    assert first["llm_usage"]["calls"] == 1 and first["llm_usage"]["failures"] == 1
    assert first["llm_usage"]["skipped"] >= 1  # the reply, after the deadline
    assert third["llm_usage"]["calls"] == 0 and third["llm_usage"]["skipped"] >= 2
    assert first["intent"]["label"] in ctx.domains and first["response"] is None and third["agent"]
    assert len(pcm.memory("d")) >= 3
    assert sum("call failed" in m for m in one_line_warnings(caplog)) == 2


def test_server_errors_are_retried_then_the_circuit_opens_and_a_trial_follows_the_cooldown(ctx, faults, caplog):
    pcm = llm_pcm(ctx, faults, "error500", llm_max_retries=1, llm_breaker_failures=3, llm_cooldown=60.0)
    with caplog.at_level(logging.WARNING, logger="pcm.llm"):
        first = pcm.process(TEXT, user_id="e")
        assert faults.count("error500") == 3  # intent: two attempts; reply: one, then the circuit opens
        assert first["llm_usage"] == {**first["llm_usage"], "calls": 3, "failures": 3, "invalid": 0}
        second = pcm.process("The bakery opens at six every morning.", user_id="e")
        assert faults.count("error500") == 3 and second["llm_usage"]["skipped"] >= 2
        pcm.services.llm.breaker.open_until = time.time()  # as if the 60-s cool-down had passed
        third = pcm.process("I bake the sourdough myself.", user_id="e")
        assert faults.count("error500") == 4  # one trial call after the cooldown, which fails again
        assert third["llm_usage"]["calls"] == 1 and third["llm_usage"]["failures"] == 1
    assert len(one_line_warnings(caplog)) == 4
    assert pcm.services.llm.usage.calls == 4 and pcm.services.llm.usage.failures == 4


def test_rate_limit_retry_after_is_honoured_within_the_deadline(ctx, faults):
    faults.replies["ratelimit"] = lambda request: json.dumps({"distribution": {"Personal": 0.7, "Professional": 0.3}})
    pcm = llm_pcm(ctx, faults, "ratelimit", llm_turn_deadline=5.0, llm_reply=False)
    out = pcm.process(TEXT, user_id="r")
    times = [t for mode, t, _ in faults.requests if mode == "ratelimit"]
    assert len(times) == 2 and times[1] - times[0] >= 1.0
    assert out["intent"]["label"] == "Personal" and out["intent"]["confidence"] == pytest.approx(0.7)
    assert out["llm_usage"]["calls"] == 2 and out["llm_usage"]["failures"] == 1


@pytest.mark.parametrize("mode", ["malformed", "wrongschema", "wrongcontent"])
def test_bad_replies_fall_back_and_never_become_memory_or_an_answer(ctx, faults, mode, caplog):
    pcm = llm_pcm(
        ctx, faults, mode, token_budget=40, eviction_size=1, llm_fact_batch=1, llm_breaker_failures=100
    )  # every turn asks: this is about validation
    with caplog.at_level(logging.WARNING, logger="pcm.llm"):
        outs = [
            pcm.process(text, user_id="b")
            for text in (TEXT, "The bakery opens at six every morning.", "I bake the sourdough myself.")
        ]
    pcm.flush("b")
    assert outs[0]["llm_usage"]["calls"] >= 1
    for out in outs:
        assert out["response"] is None and not out.get("messages")
        assert out["intent"]["label"] in ctx.domains
        assert out["llm_usage"]["failures"] == out["llm_usage"]["calls"]
        if mode == "wrongcontent":
            assert out["llm_usage"]["invalid"] == out["llm_usage"]["calls"] >= 1
    contents = [n.content for n in pcm.memory("b").nodes()]
    assert contents and not any("foo" in c or "not json" in c or "unexpected" in c for c in contents)
    assert all(t["role"] == "user" for t in pcm.state("b")["working_memory"])
    assert one_line_warnings(caplog)


TURNS = (
    TEXT,
    "The bakery opens at six every morning.",
    "I bake the sourdough myself.",
    "On Sundays I walk along the river.",
)
INVALID = '{"foo": 1}'  # fails every schema and is no usable text


@pytest.fixture
def offline_seconds(ctx) -> list[float]:
    """The offline path's wall time for each of TURNS, measured once its one-time costs are paid
    (`Services.warm_up` loads the models but runs no forward pass and loads no word list)."""
    offline = PCM(ctx.replace(data_dir=ctx.data_dir + "-offline"), checkpointer=InMemorySaver())
    timed_turns(offline, "cold", TURNS)
    return timed_turns(offline, "warm", TURNS)[1]


def assert_within_deadline(seconds: list[float], offline: list[float], deadline: float) -> None:
    """Each turn takes at most the deadline + 1 s plus three times the offline path's time just
    before. On CI's two loaded cores the offline work of one turn was seen to take 3.3 times its
    time measured a moment earlier (0.54 s, then 1.8 s); the failures this guards against cost
    10-60 s a turn."""
    limits = [deadline + 1.0 + 3 * o for o in offline]
    assert all(s <= limit for s, limit in zip(seconds, limits)), (seconds, offline)


@pytest.mark.parametrize(
    "delay", [1.2, 5.0, 60.0], ids=["slower-than-half-the-deadline", "past-the-deadline", "hanging"]
)
def test_a_slow_server_with_invalid_replies_keeps_each_turn_within_its_deadline_and_opens_the_breaker(
    ctx, faults, delay, offline_seconds
):
    """Issue 43: a slow server answering with invalid replies cost 10-15 s a turn and never
    tripped the breaker. Now every turn ends within `llm_turn_deadline` + 1 s, a slow or
    invalid reply is a breaker failure, and after `llm_breaker_failures` of them the LLM is skipped."""
    deadline, failures = 3.0, 3
    faults.replies["slowinvalid"] = lambda request: time.sleep(delay) or INVALID
    pcm = llm_pcm(
        ctx,
        faults,
        "slowinvalid",
        llm_turn_deadline=deadline,
        llm_timeout=30.0,
        llm_breaker_failures=failures,
        llm_cooldown=120.0,
    )
    pcm.services.warm_up()
    assert pcm.services.llm is not None  # its client built (imports) before timing
    outs, seconds = timed_turns(pcm, "s", TURNS)
    assert all(out["llm_usage"]["seconds"] <= deadline + 0.1 for out in outs), [o["llm_usage"] for o in outs]
    assert_within_deadline(seconds, offline_seconds, deadline)
    assert faults.count("slowinvalid") == failures  # then the circuit is open
    assert pcm.services.llm.breaker.state == "open"
    assert sum(out["llm_usage"]["calls"] for out in outs) == failures
    assert all(out["llm_usage"]["failures"] == out["llm_usage"]["calls"] for out in outs)
    assert outs[-1]["llm_usage"]["calls"] == 0 and outs[-1]["llm_usage"]["skipped"] >= 1
    assert outs[-1]["llm_usage"]["seconds"] < 0.1
    assert all(out["response"] is None and out["intent"]["label"] in ctx.domains for out in outs)


def test_fast_invalid_replies_open_the_breaker(ctx, faults):
    pcm = llm_pcm(ctx, faults, "wrongcontent", llm_breaker_failures=3, llm_cooldown=120.0)
    first, second = (pcm.process(text, user_id="v") for text in TURNS[:2])
    assert first["llm_usage"]["calls"] == first["llm_usage"]["invalid"] == 3  # intent twice, then the reply
    assert faults.count("wrongcontent") == 3 and pcm.services.llm.breaker.state == "open"
    assert second["llm_usage"]["calls"] == 0 and second["llm_usage"]["skipped"] >= 1


class HangingModel(GenericFakeChatModel):
    """A chat model that takes no timeout option and answers (validly) only after `delay` seconds."""

    delay: float = 20.0

    def _generate(self, *args, **kwargs):
        time.sleep(self.delay)
        return super()._generate(*args, **kwargs)


def test_a_hanging_chat_model_of_any_kind_is_cut_off_at_the_turn_deadline(ctx, offline_seconds):
    deadline = 1.5
    model = HangingModel(messages=iter([AIMessage(content='{"distribution": {"Personal": 1.0}}')] * 10))
    ctx = ctx.replace(
        llm_model="hanging",
        llm_intent_confidence=1.0,
        llm_turn_deadline=deadline,
        llm_breaker_failures=2,
        llm_cooldown=120.0,
    )
    pcm = PCM(ctx, Services(ctx, chat_model=model), checkpointer=InMemorySaver())
    pcm.services.warm_up()
    outs, seconds = timed_turns(pcm, "h", TURNS[:3])
    assert_within_deadline(seconds, offline_seconds, deadline)
    assert [out["llm_usage"]["calls"] for out in outs] == [1, 1, 0]
    assert [out["llm_usage"]["failures"] for out in outs] == [1, 1, 0]
    assert outs[0]["llm_usage"]["seconds"] == pytest.approx(deadline, abs=0.2)
    assert pcm.services.llm.breaker.state == "open" and outs[-1]["llm_usage"]["skipped"] >= 1
