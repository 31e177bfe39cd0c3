"""LLM access through langchain-openai (any OpenAI-compatible endpoint), or any LangChain chat model.

Structured output is asked for as JSON in the prompt and validated with pydantic, so it
works with every chat model, including endpoints that ignore `response_format` and tools
(small local models) and LangChain's fake models in tests. A reply is searched for its
JSON object (bare, fenced, or between prose); a reply that fails validation is never
used: the caller gets None and the offline path takes over.

Failing fast:
- every turn has an LLM time budget, its deadline (`llm_turn_deadline`): each call's
  timeout is what is left of it (at most `llm_timeout`), and once it is spent the turn's
  remaining requests are skipped. The timeout holds for any chat model: the call runs on
  a worker thread that is no longer waited for once it passes (`call_within`). The
  deadline bounds the time spent on the LLM (calls, waits, backoff), not the offline work
  around it (loading a model on first use must not starve the LLM of its turn);
- a circuit breaker stops calling an endpoint after `llm_breaker_failures` failures in a
  row (or as long as a 429's Retry-After asks), for `llm_cooldown` seconds, then lets one
  trial call through. Slowness and bad replies are failures too: an error, a call past its
  timeout, a reply that fails validation, or a valid one that used up the turn's LLM time.
  Only a valid reply in time is a success;
- transient failures (timeouts, connection errors, 429, 5xx) are retried within the
  deadline; an invalid reply is retried once with the validation error as feedback,
  unless most recent replies were invalid (a model that cannot follow the format is not
  asked twice).
Every attempt is counted in `LLMUsage`, failed ones included; a failure is one log line
(the traceback only at debug level).
"""

from __future__ import annotations

import contextvars
import dataclasses
import json
import logging
import math
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlparse
from typing import ClassVar, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError, field_validator

from pcm.config import PCMContext
from pcm.validation import check_unicode

logger = logging.getLogger(__name__)
Schema = TypeVar("Schema", bound=BaseModel)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
MAX_JSON_CANDIDATES = 16
MAX_TEXT_CHARS = 4000
#: the longest a call waits for the circuit to reopen (a Retry-After), deadline permitting
MAX_BREAKER_WAIT = 5.0
#: calls not sent with less LLM time left than this (seconds)
MIN_CALL_SECONDS = 0.05
#: LLM calls running at once (on worker threads, see `call_within`), abandoned ones included
MAX_CALLS_IN_FLIGHT = 32
_CALL_SLOTS = threading.BoundedSemaphore(MAX_CALLS_IN_FLIGHT)
#: a reply must be usable text: not a JSON object or list, not a code fence, not empty
_NOT_PROSE = re.compile(r"^\s*(\{|\[|```)")


def check_text(value: str, name: str = "text", max_chars: int = MAX_TEXT_CHARS) -> str:
    """`value` stripped, or ValueError if it cannot be stored as text: empty, too long, a
    NUL or a lone surrogate (not valid Unicode), or a JSON/code blob instead of prose."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string")
    value = value.strip()
    if not value:
        raise ValueError(f"{name} is empty")
    if len(value) > max_chars:
        raise ValueError(f"{name} has {len(value)} characters; at most {max_chars}")
    if "\x00" in value:
        raise ValueError(f"{name} contains a NUL character")
    check_unicode(value, name)
    if _NOT_PROSE.match(value):
        raise ValueError(f"{name} is a JSON or code block, not text")
    return value


def _short_text(value: str) -> str:
    return check_text(value, max_chars=400)


class IntentJudgement(BaseModel):
    """P(I | u) over the domains and, when allowed, a few topics of the LLM's own naming."""

    distribution: dict[str, float]

    @field_validator("distribution")
    @classmethod
    def _probabilities(cls, value: dict[str, float]) -> dict[str, float]:
        if not value or len(value) > 12:
            raise ValueError("distribution needs 1 to 12 entries")
        for key, probability in value.items():
            if not key.strip() or len(key) > 40:
                raise ValueError(f"bad domain or topic name {key!r}")
            if not math.isfinite(probability) or probability < 0:
                raise ValueError(f"probability of {key!r} must be a non-negative number")
        if sum(value.values()) <= 0:
            raise ValueError("probabilities sum to zero")
        return value


class RelationJudgement(BaseModel):
    """How a new input relates to the retrieved memories."""

    EXAMPLE: ClassVar[str] = ('{"relation": "contradiction", "conflict_score": 0.9, "conflicting_ids": ["m-1a2b"], '
                              '"supported_ids": [], "reason": "the user changed jobs"}')
    MAX_TOKENS: ClassVar[int] = 160
    relation: Literal["consistent", "novel", "contradiction"]
    conflict_score: float = Field(ge=0.0, le=1.0)
    conflicting_ids: list[str] = Field(default_factory=list)
    supported_ids: list[str] = Field(default_factory=list)
    reason: str = ""


class HypothesisDraft(BaseModel):
    EXAMPLE: ClassVar[str] = ('{"monologue": "They mention weekend courses in ML; maybe preparing a career change.", '
                              '"hypothesis": "The user may be moving into machine learning.", '
                              '"evidence_keywords": ["machine learning", "course"]}')
    MAX_TOKENS: ClassVar[int] = 200
    monologue: str
    hypothesis: str
    evidence_keywords: list[str] = Field(default_factory=list, max_length=10)

    @field_validator("hypothesis")
    @classmethod
    def _hypothesis_is_text(cls, value: str) -> str:
        return _short_text(value)

    @field_validator("monologue")
    @classmethod
    def _monologue_is_text(cls, value: str) -> str:
        return check_text(value, "monologue", 1000)

    @field_validator("evidence_keywords")
    @classmethod
    def _keywords(cls, value: list[str]) -> list[str]:
        return [check_text(k, "keyword", 40) for k in value if k.strip()]


class ExtractedFact(BaseModel):
    turn: int = Field(ge=1)
    fact: str

    @field_validator("fact")
    @classmethod
    def _fact_is_text(cls, value: str) -> str:
        return _short_text(value)


class ExtractedFacts(BaseModel):
    EXAMPLE: ClassVar[str] = ('{"facts": [{"turn": 1, "fact": "Caroline went to an LGBTQ support group on 7 May 2023."}, '
                              '{"turn": 3, "fact": "Melanie has two children."}]}')
    MAX_TOKENS: ClassVar[int] = 400
    facts: list[ExtractedFact] = Field(max_length=40)


@dataclass
class LLMUsage:
    """LLM cost and health: `calls` counts every attempt sent (failed ones too); `failures`
    every failed attempt, of which `invalid` are replies that failed validation; `skipped`
    the requests not sent because the turn's deadline had passed or the circuit was open;
    `seconds` the time spent on the LLM: calls, and waits for the circuit or a retry."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    failures: int = 0
    invalid: int = 0
    skipped: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, int | float]:
        counts = dataclasses.asdict(self)
        counts["seconds"] = round(self.seconds, 3)
        return counts

    def add(self, **counts: int) -> None:
        for name, count in counts.items():
            setattr(self, name, getattr(self, name) + count)


def add_usage(total: dict | None, usage: LLMUsage | dict | None) -> dict[str, int | float]:
    """The per-turn usage in graph state plus one step's usage."""
    extra = usage.as_dict() if isinstance(usage, LLMUsage) else (usage or {})
    summed = {k: (total or {}).get(k, 0) + extra.get(k, 0) for k in LLMUsage().as_dict()}
    summed["seconds"] = round(summed["seconds"], 3)
    return summed


class CircuitBreaker:
    """Closed → open after `failure_threshold` failures in a row (or for a 429's Retry-After),
    → after `cooldown` seconds one trial call (half-open) → closed on success, open again on
    failure. Its own small class because it must honour Retry-After and say *when* it will
    let a call through, so that a turn can wait for it or skip within its deadline."""

    def __init__(self, failure_threshold: int = 3, cooldown: float = 30.0, clock: Callable[[], float] = time.time):
        self.failure_threshold = max(1, failure_threshold)
        self.cooldown = cooldown
        self.clock = clock
        self.failures = 0
        self.open_until = 0.0
        self._trial_running = False
        self._lock = threading.Lock()

    @property
    def state(self) -> str:
        if self.open_until > self.clock():
            return "open"
        return "half-open" if self.failures >= self.failure_threshold else "closed"

    def wait_time(self) -> float:
        """Seconds until a call may be sent (0: now). Half-open lets one trial call through."""
        with self._lock:
            now = self.clock()
            if self.open_until > now:
                return self.open_until - now
            if self.failures >= self.failure_threshold:
                if self._trial_running:
                    return self.cooldown
                self._trial_running = True
            return 0.0

    def record_success(self) -> None:
        with self._lock:
            self.failures, self.open_until, self._trial_running = 0, 0.0, False

    def record_failure(self, retry_after: float | None = None) -> None:
        with self._lock:
            self.failures += 1
            self._trial_running = False
            now = self.clock()
            if self.failures >= self.failure_threshold:
                self.open_until = max(self.open_until, now + self.cooldown)
            if retry_after is not None:
                self.open_until = max(self.open_until, now + retry_after)


class _ValidationHistory:
    """Outcomes of the last replies, to stop retrying invalid replies of a model that mostly fails."""

    def __init__(self, size: int = 20):
        self.outcomes: deque[bool] = deque(maxlen=size)
        self._lock = threading.Lock()

    def record(self, valid: bool) -> None:
        with self._lock:
            self.outcomes.append(valid)

    def retry_worthwhile(self) -> bool:
        with self._lock:
            return len(self.outcomes) < 5 or sum(self.outcomes) >= len(self.outcomes) / 2


def json_objects(text: str):
    """The JSON objects in a reply, in order: the whole reply, fenced blocks, then every `{`
    that starts a decodable object (so prose before or after it does not matter)."""
    decoder = json.JSONDecoder()
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    seen = 0
    for source in sources:
        start = source.find("{")
        while start != -1 and seen < MAX_JSON_CANDIDATES:
            try:
                value, end = decoder.raw_decode(source, start)
            except ValueError:
                start = source.find("{", start + 1)
                continue
            seen += 1
            if isinstance(value, dict):
                yield value
            start = source.find("{", end)


def parse_reply(schema: type[Schema], text: str) -> Schema:
    """The first JSON object in `text` that validates as `schema`; ValueError naming the problem."""
    first_error: str | None = None
    for candidate in json_objects(text):
        try:
            return schema.model_validate(candidate)
        except ValidationError as error:
            first_error = first_error or _first_line(error)
    raise ValueError(first_error or "no JSON object in the reply")


def _first_line(error: Exception) -> str:
    if isinstance(error, ValidationError) and error.errors():
        detail = error.errors()[0]
        where = ".".join(str(p) for p in detail.get("loc", ())) or "reply"
        return f"{where}: {detail.get('msg', 'invalid')}"
    text = str(error).strip().splitlines()
    return text[0][:200] if text else type(error).__name__


def retry_after_seconds(error: Exception) -> float | None:
    """The Retry-After of an HTTP error (seconds form), if it has one."""
    headers = getattr(getattr(error, "response", None), "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def call_within(seconds: float, function: Callable, *args, **kwargs):
    """`function(*args, **kwargs)`, or TimeoutError once `seconds` have passed. It runs on a
    daemon thread (with the caller's context, for LangChain callbacks), left to finish on its
    own if it is late; at most `MAX_CALLS_IN_FLIGHT` such threads live at a time."""
    deadline, slots = time.monotonic() + seconds, _CALL_SLOTS
    if not slots.acquire(timeout=seconds):
        raise TimeoutError("too many LLM calls are still running")
    outcome: dict = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = function(*args, **kwargs)
        except BaseException as error:  # noqa: BLE001 - raised again in the caller
            outcome["error"] = error
        finally:
            slots.release()
            done.set()

    try:
        threading.Thread(target=contextvars.copy_context().run, args=(run,), name="pcm-llm-call",
                         daemon=True).start()
    except BaseException:
        slots.release()
        raise
    if not done.wait(max(0.0, deadline - time.monotonic())):
        raise TimeoutError(f"no reply within {seconds:.2f} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def is_transient(error: Exception) -> bool:
    """Worth retrying: no HTTP status (timeout, connection), 408, 409, 429 or 5xx."""
    status = getattr(error, "status_code", None)
    return status is None or status in (408, 409, 429) or status >= 500


@dataclass
class LLMClient:
    """A chat model plus deadline, circuit breaker, retries, validation and usage counting.

    `for_turn(budget)` gives a view for (a step of) one turn: same model, breaker and totals,
    its own `usage` (what it spent), and `budget` seconds of LLM time; `totals` counts the
    whole process.
    """

    chat_model: object
    max_retries: int = 1
    timeout: float = 30.0
    max_tokens: int = 0
    breaker: CircuitBreaker = field(default_factory=CircuitBreaker)
    usage: LLMUsage = field(default_factory=LLMUsage)
    totals: LLMUsage | None = None
    budget: float | None = None
    history: _ValidationHistory = field(default_factory=_ValidationHistory)

    @classmethod
    def for_context(cls, chat_model: object, ctx: PCMContext) -> "LLMClient":
        return cls(chat_model, max_retries=ctx.llm_max_retries, timeout=ctx.llm_timeout,
                   max_tokens=ctx.llm_max_tokens,
                   breaker=CircuitBreaker(ctx.llm_breaker_failures, ctx.llm_cooldown))

    def for_turn(self, budget: float | None) -> "LLMClient":
        return dataclasses.replace(self, usage=LLMUsage(), totals=self.totals or self.usage, budget=budget)

    def _count(self, **counts: int) -> None:
        self.usage.add(**counts)
        if self.totals is not None:
            self.totals.add(**counts)

    def _remaining(self) -> float:
        """LLM time left of the budget (this view's own calls and waits count against it)."""
        return math.inf if self.budget is None else self.budget - self.usage.seconds

    def _sleep(self, seconds: float) -> None:
        time.sleep(seconds)
        self._count(seconds=seconds)

    def _call_options(self, timeout: float, max_tokens: int) -> dict:
        """Per-call timeout and output cap, for chat models that take them (OpenAI-compatible)."""
        from langchain_openai.chat_models.base import BaseChatOpenAI

        if not isinstance(self.chat_model, BaseChatOpenAI):
            return {}
        return {"timeout": timeout, "max_tokens": self.max_tokens or max_tokens}

    def _ready(self, kind: str) -> bool:
        """True when a call may be sent now: the budget has room and the breaker lets it
        through (waiting for it when it reopens within the budget); else counted as skipped."""
        reason = None
        if self._remaining() <= MIN_CALL_SECONDS:
            reason = "turn deadline passed"
        else:
            wait = self.breaker.wait_time()
            if 0 < wait < min(self._remaining() - 1.0, MAX_BREAKER_WAIT):
                self._sleep(wait)
                wait = self.breaker.wait_time()
            if wait > 0:
                reason = "circuit open"
        if reason is None:
            return True
        self._count(skipped=1)
        logger.info("LLM %s skipped: %s", kind, reason)
        return False

    def _send(self, kind: str, messages: list[tuple[str, str]], max_tokens: int
              ) -> tuple[str | None, Exception | None]:
        """One attempt: (reply text, None), or (None, error) after a failure or past its
        timeout (counted, a breaker failure, logged in one line). `_request` records the
        breaker outcome of a reply, once it is validated."""
        timeout = min(self.timeout, max(MIN_CALL_SECONDS, self._remaining()))
        options = self._call_options(timeout, max_tokens)     # its first call imports langchain_openai: not LLM time
        self._count(calls=1)
        started = time.perf_counter()
        try:
            reply = call_within(timeout, self.chat_model.invoke, messages, **options)
        except Exception as error:  # noqa: BLE001 - any provider error falls back to the offline path
            self._count(failures=1, seconds=time.perf_counter() - started)
            self.breaker.record_failure(retry_after_seconds(error))
            logger.warning("LLM %s call failed: %s: %s", kind, type(error).__name__, _first_line(error))
            logger.debug("LLM %s call failure", kind, exc_info=True)
            return None, error
        self._count(seconds=time.perf_counter() - started)
        meta = getattr(reply, "usage_metadata", None) or {}
        self._count(input_tokens=int(meta.get("input_tokens", 0)), output_tokens=int(meta.get("output_tokens", 0)))
        content = reply.content if hasattr(reply, "content") else str(reply)
        return (content if isinstance(content, str) else json.dumps(content)), None

    def _request(self, kind: str, messages: list[tuple[str, str]], parse: Callable[[str], object],
                 max_tokens: int):
        """Send, validate with `parse` and retry as the module docstring says; None if nothing valid came."""
        attempts = 0
        while attempts <= self.max_retries:
            if not self._ready(kind):
                return None
            attempts += 1
            text, error = self._send(kind, messages, max_tokens)
            if text is None:
                backoff = min(0.5 * 2 ** (attempts - 1), 4.0)
                if attempts > self.max_retries or not is_transient(error) or backoff >= self._remaining() - 1.0:
                    return None
                self._sleep(backoff)
                continue
            try:
                value = parse(text)
            except ValueError as error:
                self._count(failures=1, invalid=1)
                self.breaker.record_failure()
                self.history.record(False)
                logger.warning("LLM %s reply failed validation (attempt %d): %s", kind, attempts,
                               _first_line(error))
                if not self.history.retry_worthwhile():
                    return None
                messages = [*messages, ("ai", text[:2000]),
                            ("human", f"That reply was not valid ({_first_line(error)}). "
                                      "Reply again with only the corrected answer.")]
                continue
            self.history.record(True)
            if self._remaining() > MIN_CALL_SECONDS:
                self.breaker.record_success()
            else:                                   # valid, but it used up the turn's LLM time
                self.breaker.record_failure()
                logger.info("LLM %s reply used up the turn's LLM time", kind)
            return value
        return None

    def complete(self, system: str, user: str, max_tokens: int = 256, max_chars: int = MAX_TEXT_CHARS) -> str | None:
        """A free-text reply that passes `check_text` (usable prose), or None."""
        return self._request("text", [("system", system), ("human", user)],
                             lambda text: check_text(text, "reply", max_chars), max_tokens)

    def structured(self, schema: type[Schema], system: str, user: str, example: str | None = None,
                   max_tokens: int | None = None) -> Schema | None:
        """A validated `schema` instance, or None. The prompt shows the expected JSON by
        `example` (else the schema's `EXAMPLE`, else its JSON schema); the reply is capped at
        `max_tokens` (else the schema's `MAX_TOKENS`, else 256)."""
        shape = example or getattr(schema, "EXAMPLE", None) or json.dumps(schema.model_json_schema())
        instructions = f"{system}\n\nReply with one JSON object and nothing else, shaped like this: {shape}"
        return self._request(schema.__name__, [("system", instructions), ("human", user)],
                             lambda text: parse_reply(schema, text),
                             max_tokens or getattr(schema, "MAX_TOKENS", 256))


def build_chat_model(ctx: PCMContext):
    """ChatOpenAI for the configured endpoint; the key comes only from the environment or `.env`.

    Its own retries are off: `LLMClient` retries, so that every attempt is counted and the
    turn's deadline holds. An endpoint on loopback (`pcm serve-llm`) needs no key.
    """
    from dotenv import load_dotenv
    from langchain_openai import ChatOpenAI

    load_dotenv()
    api_key = os.environ.get("PCM_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY")
    if not api_key and urlparse(ctx.llm_base_url).hostname in ("127.0.0.1", "localhost", "::1"):
        api_key = "local-no-key"                     # a server on loopback (`pcm serve-llm`) needs none
    if not api_key:
        raise RuntimeError("llm_model is set but neither PCM_LLM_API_KEY nor OPENAI_API_KEY is in the environment")
    return ChatOpenAI(model=ctx.llm_model, base_url=ctx.llm_base_url or None, api_key=api_key,
                      timeout=ctx.llm_timeout, max_retries=0, temperature=0)
