"""The LLM client without a network: reply parsing, validation, the circuit breaker, the turn
deadline, usage counting; dynamic topics; settings resolution for served graphs."""

import json
import logging
import threading
import time

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

import pcm.llm.calls as llm_calls
from pcm.api import PCM
from pcm.config import PCMContext, load_context, resolve_context
from pcm.llm import (
    CircuitBreaker,
    ExtractedFacts,
    HypothesisDraft,
    IntentJudgement,
    LLMClient,
    RelationJudgement,
    check_text,
    parse_reply,
)
from pcm.perception.intent import with_topics
from pcm.services import Services


def fake(*replies, **kwargs) -> LLMClient:
    return LLMClient(GenericFakeChatModel(messages=iter([AIMessage(content=r) for r in replies])), **kwargs)


RELATION = {"relation": "novel", "conflict_score": 0.2, "conflicting_ids": [], "supported_ids": [], "reason": "new"}


@pytest.mark.parametrize(
    "reply",
    [
        json.dumps(RELATION),
        f"```json\n{json.dumps(RELATION)}\n```",
        f"Sure! Here is my answer:\n{json.dumps(RELATION)}\nI hope this helps {{:)}}",
        f'{{"note": "a first object of another shape"}} and then {json.dumps(RELATION)}',
        f"```\n{json.dumps(RELATION, indent=2)}\n```\nThat is all.",
    ],
)
def test_json_is_found_bare_fenced_or_between_prose(reply):
    assert parse_reply(RelationJudgement, reply).relation == "novel"


@pytest.mark.parametrize(
    "reply,problem",
    [
        ("I think it is novel.", "no JSON object"),
        ('{"relation": "maybe", "conflict_score": 0.2}', "relation"),
        ('{"relation": "novel", "conflict_score": 7}', "conflict_score"),
        ('{"properties": {"relation": {"type": "string"}}}', "relation"),  # the schema echoed back
        ('{"relation": "novel", "conflict_score": 0.2', "no JSON object"),  # cut short
    ],
)
def test_replies_that_fail_validation_say_why(reply, problem):
    with pytest.raises(ValueError, match=problem):
        parse_reply(RelationJudgement, reply)


@pytest.mark.parametrize(
    "schema,reply",
    [
        (HypothesisDraft, '{"monologue": "hm", "hypothesis": "{\\"nested\\": 1}", "evidence_keywords": []}'),
        (HypothesisDraft, '{"monologue": "hm", "hypothesis": "   ", "evidence_keywords": []}'),
        (ExtractedFacts, '{"facts": [{"turn": 1, "fact": "```json {} ```"}]}'),
        (ExtractedFacts, '{"facts": [{"turn": 0, "fact": "Alice likes tea."}]}'),
        (ExtractedFacts, '{"facts": ["Alice likes tea."]}'),
        (IntentJudgement, '{"distribution": {"Coding": -1, "Casual": 0.5}}'),
        (IntentJudgement, '{"distribution": {"Coding": 0, "Casual": 0}}'),
    ],
)
def test_what_would_become_memory_is_validated_as_text(schema, reply):
    with pytest.raises(ValueError):
        parse_reply(schema, reply)


def test_check_text_rejects_blobs_surrogates_and_empty_replies():
    assert check_text("  Noted, thanks!  ") == "Noted, thanks!"
    for bad in (
        "",
        "   ",
        '{"reply": "hi"}',
        "[1, 2]",
        "```python\nprint()```",
        "a\x00b",
        "bad \ud800 text",
        "x" * 5000,
    ):
        with pytest.raises(ValueError):
            check_text(bad)


def test_a_malformed_reply_is_retried_with_feedback_then_given_up():
    llm = fake("not json", '{"relation": "novel", "conflict_score": 0.1}')
    judged = llm.structured(RelationJudgement, "judge", "text")
    assert judged is not None and judged.relation == "novel"
    assert llm.usage.calls == 2 and llm.usage.invalid == 1 and llm.usage.failures == 1
    llm = fake("nope", "still nope", "never asked")
    assert llm.structured(RelationJudgement, "judge", "text") is None
    assert llm.usage.calls == 2 and llm.usage.invalid == 2


def test_a_model_that_mostly_fails_the_format_is_not_asked_twice():
    llm = fake(*(["not json"] * 30), breaker=CircuitBreaker(100))  # invalid replies would open the default one
    for _ in range(6):
        llm.structured(RelationJudgement, "judge", "text")
    calls_before = llm.usage.calls
    llm.structured(RelationJudgement, "judge", "text")
    assert llm.usage.calls == calls_before + 1  # no retry once most recent replies were invalid


def test_free_text_that_fails_validation_is_not_returned():
    llm = fake('{"foo": 1}', '{"bar": 2}')
    assert llm.complete("system", "hello") is None
    assert llm.usage.invalid == 2


class FlakyModel(GenericFakeChatModel):
    """Raises for the first `failures` calls (a transport error without an HTTP status)."""

    failures: int = 0
    seen: int = 0

    def _generate(self, *args, **kwargs):
        self.seen += 1
        if self.seen <= self.failures:
            raise ConnectionError("connection refused")
        return super()._generate(*args, **kwargs)


def test_transport_failures_are_counted_retried_and_logged_in_one_line(caplog):
    model = FlakyModel(failures=1, messages=iter([AIMessage(content=json.dumps(RELATION))]))
    llm = LLMClient(model, max_retries=1)
    with caplog.at_level(logging.DEBUG, logger="pcm.llm"):
        judged = llm.structured(RelationJudgement, "judge", "text")
    assert judged is not None
    assert llm.usage.calls == 2 and llm.usage.failures == 1 and llm.usage.invalid == 0
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "\n" not in warnings[0].getMessage() and warnings[0].exc_info is None
    assert any(r.exc_info for r in caplog.records if r.levelno == logging.DEBUG)  # the traceback, at debug only


def test_circuit_breaker_opens_cools_down_and_lets_one_trial_through():
    now = [1000.0]
    breaker = CircuitBreaker(failure_threshold=2, cooldown=30, clock=lambda: now[0])
    assert breaker.wait_time() == 0 and breaker.state == "closed"
    breaker.record_failure()
    assert breaker.state == "closed"
    breaker.record_failure()
    assert breaker.state == "open" and breaker.wait_time() == pytest.approx(30)
    now[0] += 30.5
    assert breaker.state == "half-open"
    assert breaker.wait_time() == 0  # the trial call
    assert breaker.wait_time() > 0  # no second call while the trial runs
    breaker.record_failure()
    assert breaker.state == "open"
    now[0] += 31
    assert breaker.wait_time() == 0
    breaker.record_success()
    assert breaker.state == "closed" and breaker.wait_time() == 0


def test_retry_after_opens_the_breaker_for_that_long():
    now = [0.0]
    breaker = CircuitBreaker(failure_threshold=5, cooldown=30, clock=lambda: now[0])
    breaker.record_failure(retry_after=2.0)
    assert breaker.state == "open" and breaker.wait_time() == pytest.approx(2.0)
    now[0] += 2.1
    assert breaker.wait_time() == 0


def test_an_open_circuit_and_a_passed_deadline_skip_calls_without_sending():
    llm = fake("never sent")
    llm.breaker.record_failure(retry_after=60)
    assert llm.structured(RelationJudgement, "judge", "text") is None
    assert llm.usage.calls == 0 and llm.usage.skipped == 1
    late = fake("never sent").for_turn(0.0)  # the turn's LLM time is spent
    assert late.complete("system", "hello") is None and late.usage.skipped == 1 and late.usage.calls == 0


def test_the_budget_counts_time_spent_on_the_llm_only():
    llm = fake("first", "second").for_turn(10.0)
    llm.complete("s", "u")
    time.sleep(0.2)  # offline work does not use the budget
    assert 0 < llm.usage.seconds < 0.2 and llm._remaining() > 9.8
    assert llm.complete("s", "u") == "second"


def test_turn_views_count_their_own_usage_and_the_totals():
    llm = fake("one", "two")
    first, second = llm.for_turn(None), llm.for_turn(None)
    first.complete("s", "u")
    second.complete("s", "u")
    assert first.usage.calls == second.usage.calls == 1 and llm.usage.calls == 2
    assert first.breaker is llm.breaker


class SlowModel(GenericFakeChatModel):
    """Answers after `delay` seconds and takes no timeout option (unlike ChatOpenAI)."""

    delay: float = 0.0

    def _generate(self, *args, **kwargs):
        time.sleep(self.delay)
        return super()._generate(*args, **kwargs)


def test_invalid_replies_are_breaker_failures_and_only_a_valid_one_closes_it():
    now = [0.0]
    llm = fake("nope", "still nope", json.dumps(RELATION), breaker=CircuitBreaker(2, 60, clock=lambda: now[0]))
    assert llm.structured(RelationJudgement, "judge", "text") is None
    assert llm.usage.calls == llm.usage.invalid == 2 and llm.breaker.state == "open"
    assert llm.structured(RelationJudgement, "judge", "text") is None
    assert llm.usage.calls == 2 and llm.usage.skipped == 1
    now[0] += 61
    assert llm.structured(RelationJudgement, "judge", "text").relation == "novel"  # the half-open trial
    assert llm.breaker.state == "closed" and llm.breaker.failures == 0


@pytest.mark.parametrize("timeout,budget", [(0.3, None), (30.0, 0.5)], ids=["call-timeout", "turn-deadline"])
def test_a_call_of_any_chat_model_is_cut_off_at_its_timeout_and_is_a_breaker_failure(timeout, budget):
    model = SlowModel(delay=3.0, messages=iter([AIMessage(content="too late")]))
    llm = LLMClient(model, timeout=timeout, max_retries=0).for_turn(budget)
    limit = min(timeout, budget or timeout)
    started = time.perf_counter()
    assert llm.complete("s", "u") is None
    assert limit <= time.perf_counter() - started < limit + 0.3
    assert llm.usage.calls == llm.usage.failures == 1 and llm.usage.invalid == 0
    assert llm.usage.seconds == pytest.approx(limit, abs=0.1) and llm.breaker.failures == 1


def test_a_valid_reply_that_uses_up_the_turn_is_a_breaker_failure_and_a_timely_one_a_success():
    model = SlowModel(delay=0.2, messages=iter([AIMessage(content="first"), AIMessage(content="second")]))
    llm = LLMClient(model, max_retries=0, breaker=CircuitBreaker(5, 60))
    llm.breaker.record_failure()
    late = llm.for_turn(0.24)  # replies with < 0.05 s of the turn left (or past it)
    late.complete("s", "u")
    assert late.usage.calls == 1 and llm.breaker.failures == 2
    timely = llm.for_turn(5.0)
    assert timely.complete("s", "u") is not None and llm.breaker.failures == 0 and llm.breaker.state == "closed"


def test_late_calls_hold_at_most_max_calls_in_flight_threads(monkeypatch):
    monkeypatch.setattr(llm_calls, "_CALL_SLOTS", threading.BoundedSemaphore(2))
    running = lambda: sum(t.name == "pcm-llm-call" for t in threading.enumerate())  # noqa: E731
    before = running()
    llm = LLMClient(
        SlowModel(delay=1.0, messages=iter([AIMessage(content="late")] * 4)),
        timeout=0.1,
        max_retries=0,
        breaker=CircuitBreaker(100),
    )
    for _ in range(4):
        assert llm.complete("s", "u") is None
    assert llm.usage.calls == llm.usage.failures == 4
    assert running() - before <= 2  # the last two were not started: no slot within their timeout


def test_topics_join_the_domains_and_are_bounded():
    domains = ["Coding", "Casual"]
    merged = with_topics({"casual": 0.4, "Hiking": 0.3, "alps trip": 0.2, "weather": 0.05, "!!": 0.05}, domains, 2)
    assert merged == {"Coding": 0.0, "Casual": 0.4, "hiking": 0.3, "alps trip": 0.2}
    assert with_topics({"hiking": 1.0}, domains, 0) == {"Coding": 0.0, "Casual": 0.0}


def test_llm_topics_reach_the_memory_domain_distribution_and_the_mask(ctx, scripted_model):
    ctx = ctx.replace(llm_intent_confidence=1.0, llm_reply=False)
    scripted_model.intent = {"Casual": 0.5, "Personal": 0.2, "hiking": 0.3}
    pcm = PCM(ctx, Services(ctx, chat_model=scripted_model), checkpointer=InMemorySaver())
    out = pcm.process("We hiked up to the glacier hut on Saturday.", user_id="topics")
    assert out["intent"]["distribution"]["hiking"] == pytest.approx(0.3)
    assert set(ctx.domains) <= set(out["intent"]["distribution"])
    memory = pcm.memory("topics").node(out["changes"][0]["node_id"])
    assert memory.domain_distribution["hiking"] == pytest.approx(0.3, abs=1e-3)
    found = pcm.search("What did we do on the hiking trip?", user_id="topics")
    assert found and found[0].id == memory.id
    offline = PCM(ctx.replace(data_dir=ctx.data_dir + "-offline"), checkpointer=InMemorySaver())
    plain = offline.process("We hiked up to the glacier hut on Saturday.", user_id="topics")
    assert set(plain["intent"]["distribution"]) == set(ctx.domains)


def test_served_context_overrides_only_the_fields_it_changes(monkeypatch, tmp_path):
    monkeypatch.setenv("PCM_DATA_DIR", str(tmp_path / "from-env"))
    monkeypatch.setenv("PCM_TOP_K", "7")
    monkeypatch.setenv("PCM_LLM_REPLY", "false")
    served = resolve_context(PCMContext())  # what the server builds from an empty context
    assert served.data_dir == str(tmp_path / "from-env") and served.top_k == 7 and served.llm_reply is False
    studio = resolve_context({"top_k": 3, "data_dir": "./data"})  # Studio sends defaults too
    assert studio.top_k == 3 and studio.data_dir == str(tmp_path / "from-env")
    assert resolve_context(None).top_k == 7
    explicit = load_context(data_dir=str(tmp_path / "explicit"))  # complete: used as it is
    assert resolve_context(explicit) is explicit
    assert resolve_context(explicit.replace(top_k=4)).data_dir == str(tmp_path / "explicit")
    for setting, value in (
        ("llm_base_url", "http://127.0.0.1:9/v1"),
        ("data_dir", str(tmp_path / "caller")),
        ("calibration_file", "/etc/passwd"),
        ("max_input_chars", 5),
        ("eta", 0.9),
    ):
        with pytest.raises(ValueError, match=f"the run context may not set {setting}"):
            resolve_context({setting: value})  # a caller's context: refused
    trusted = resolve_context(PCMContext(data_dir=str(tmp_path / "app")), trusted=True)  # the app's own code
    assert trusted.data_dir == str(tmp_path / "app") and trusted.top_k == 7
