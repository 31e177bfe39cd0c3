"""`LLMClient`: a chat model behind the turn's deadline, the circuit breaker, retries,
validation and usage counting (the package docstring, `pcm.llm`, says how they fail fast);
`build_chat_model` makes the configured OpenAI-compatible one."""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlparse

from pcm.config import PCMContext
from pcm.llm.breaker import CircuitBreaker, ValidationHistory
from pcm.llm.calls import call_within, is_transient, retry_after_seconds
from pcm.llm.parsing import Schema, parse_reply, short_error
from pcm.llm.replies import MAX_TEXT_CHARS, check_text
from pcm.llm.usage import LLMUsage

#: the package's one logger, `pcm.llm`, which deployments and tests configure and filter
logger = logging.getLogger(__package__)
#: the longest a call waits for the circuit to reopen (a Retry-After), deadline permitting
MAX_BREAKER_WAIT = 5.0
#: calls not sent with less LLM time left than this (seconds)
MIN_CALL_SECONDS = 0.05


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
    history: ValidationHistory = field(default_factory=ValidationHistory)

    @classmethod
    def for_context(cls, chat_model: object, ctx: PCMContext) -> "LLMClient":
        return cls(
            chat_model,
            max_retries=ctx.llm_max_retries,
            timeout=ctx.llm_timeout,
            max_tokens=ctx.llm_max_tokens,
            breaker=CircuitBreaker(ctx.llm_breaker_failures, ctx.llm_cooldown),
        )

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

    def _send(self, kind: str, messages: list[tuple[str, str]], max_tokens: int) -> tuple[str | None, Exception | None]:
        """One attempt: (reply text, None), or (None, error) after a failure or past its
        timeout (counted, a breaker failure, logged in one line). `_request` records the
        breaker outcome of a reply, once it is validated."""
        timeout = min(self.timeout, max(MIN_CALL_SECONDS, self._remaining()))
        options = self._call_options(timeout, max_tokens)  # its first call imports langchain_openai: not LLM time
        self._count(calls=1)
        started = time.perf_counter()
        try:
            reply = call_within(timeout, self.chat_model.invoke, messages, **options)
        except Exception as error:  # noqa: BLE001 - any provider error falls back to the offline path
            self._count(failures=1, seconds=time.perf_counter() - started)
            self.breaker.record_failure(retry_after_seconds(error))
            logger.warning("LLM %s call failed: %s: %s", kind, type(error).__name__, short_error(error))
            logger.debug("LLM %s call failure", kind, exc_info=True)
            return None, error
        self._count(seconds=time.perf_counter() - started)
        meta = getattr(reply, "usage_metadata", None) or {}
        self._count(input_tokens=int(meta.get("input_tokens", 0)), output_tokens=int(meta.get("output_tokens", 0)))
        content = reply.content if hasattr(reply, "content") else str(reply)
        return (content if isinstance(content, str) else json.dumps(content)), None

    def _request(self, kind: str, messages: list[tuple[str, str]], parse: Callable[[str], object], max_tokens: int):
        """Send, validate with `parse` and retry as `pcm.llm` says; None if nothing valid came."""
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
                logger.warning("LLM %s reply failed validation (attempt %d): %s", kind, attempts, short_error(error))
                if not self.history.retry_worthwhile():
                    return None
                messages = [
                    *messages,
                    ("ai", text[:2000]),
                    (
                        "human",
                        f"That reply was not valid ({short_error(error)}). Reply again with only the corrected answer.",
                    ),
                ]
                continue
            self.history.record(True)
            if self._remaining() > MIN_CALL_SECONDS:
                self.breaker.record_success()
            else:  # valid, but it used up the turn's LLM time
                self.breaker.record_failure()
                logger.info("LLM %s reply used up the turn's LLM time", kind)
            return value
        return None

    def complete(self, system: str, user: str, max_tokens: int = 256, max_chars: int = MAX_TEXT_CHARS) -> str | None:
        """A free-text reply that passes `check_text` (usable prose), or None."""
        return self._request(
            "text", [("system", system), ("human", user)], lambda text: check_text(text, "reply", max_chars), max_tokens
        )

    def structured(
        self, schema: type[Schema], system: str, user: str, example: str | None = None, max_tokens: int | None = None
    ) -> Schema | None:
        """A validated `schema` instance, or None. The prompt shows the expected JSON by
        `example` (else the schema's `EXAMPLE`, else its JSON schema); the reply is capped at
        `max_tokens` (else the schema's `MAX_TOKENS`, else 256)."""
        shape = example or getattr(schema, "EXAMPLE", None) or json.dumps(schema.model_json_schema())
        instructions = f"{system}\n\nReply with one JSON object and nothing else, shaped like this: {shape}"
        return self._request(
            schema.__name__,
            [("system", instructions), ("human", user)],
            lambda text: parse_reply(schema, text),
            max_tokens or getattr(schema, "MAX_TOKENS", 256),
        )


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
        api_key = "local-no-key"  # a server on loopback (`pcm serve-llm`) needs none
    if not api_key:
        raise RuntimeError("llm_model is set but neither PCM_LLM_API_KEY nor OPENAI_API_KEY is in the environment")
    return ChatOpenAI(
        model=ctx.llm_model,
        base_url=ctx.llm_base_url or None,
        api_key=api_key,
        timeout=ctx.llm_timeout,
        max_retries=0,
        temperature=0,
    )
