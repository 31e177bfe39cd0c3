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

The package: `replies` (the reply schemas), `parsing` (finding and validating a reply's JSON),
`calls` (one call within its timeout), `breaker` (circuit breaker, validation history),
`usage` (counting) and `client` (`LLMClient`, which puts them together).
"""

from pcm.llm.breaker import CircuitBreaker
from pcm.llm.client import LLMClient, build_chat_model
from pcm.llm.parsing import parse_reply
from pcm.llm.replies import (
    ExtractedFact,
    ExtractedFacts,
    HypothesisDraft,
    IntentJudgement,
    RelationJudgement,
    check_text,
)
from pcm.llm.usage import LLMUsage, add_usage

__all__ = [
    "CircuitBreaker",
    "ExtractedFact",
    "ExtractedFacts",
    "HypothesisDraft",
    "IntentJudgement",
    "LLMClient",
    "LLMUsage",
    "RelationJudgement",
    "add_usage",
    "build_chat_model",
    "check_text",
    "parse_reply",
]
