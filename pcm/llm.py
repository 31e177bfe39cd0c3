"""LLM access through langchain-openai (any OpenAI-compatible endpoint), or any LangChain chat model.

Structured output is asked for as JSON in the prompt and validated with pydantic, so it
works with every chat model, including endpoints without tool calling and LangChain's
fake models in tests. A malformed reply is retried; after the last attempt the caller
gets None, the event is logged, and the offline path takes over. Calls and tokens are
counted so each turn can report its LLM cost.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError

from pcm.config import PCMContext

logger = logging.getLogger(__name__)
Schema = TypeVar("Schema", bound=BaseModel)
_JSON_BLOCK = re.compile(r"\{.*\}", re.DOTALL)


class IntentJudgement(BaseModel):
    distribution: dict[str, float]


class RelationJudgement(BaseModel):
    """How a new input relates to the retrieved memories."""

    relation: Literal["consistent", "novel", "contradiction"]
    conflict_score: float = Field(ge=0.0, le=1.0)
    conflicting_ids: list[str] = Field(default_factory=list)
    supported_ids: list[str] = Field(default_factory=list)
    reason: str = ""


class HypothesisDraft(BaseModel):
    monologue: str
    hypothesis: str
    evidence_keywords: list[str] = Field(default_factory=list)


class ExtractedFacts(BaseModel):
    facts: list[str]


@dataclass
class LLMUsage:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    failures: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"calls": self.calls, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "failures": self.failures}


@dataclass
class LLMClient:
    """A chat model plus retry, validation and usage counting."""

    chat_model: object
    max_attempts: int = 2
    usage: LLMUsage = field(default_factory=LLMUsage)

    def _invoke(self, messages: list[tuple[str, str]]) -> str:
        reply = self.chat_model.invoke(messages)
        self.usage.calls += 1
        meta = getattr(reply, "usage_metadata", None) or {}
        self.usage.input_tokens += int(meta.get("input_tokens", 0))
        self.usage.output_tokens += int(meta.get("output_tokens", 0))
        content = reply.content if hasattr(reply, "content") else str(reply)
        return content if isinstance(content, str) else json.dumps(content)

    def complete(self, system: str, user: str) -> str | None:
        """Free text reply, or None if the model failed."""
        try:
            return self._invoke([("system", system), ("human", user)])
        except Exception:  # noqa: BLE001 - any provider error falls back to offline behaviour
            self.usage.failures += 1
            logger.exception("LLM call failed")
            return None

    def structured(self, schema: type[Schema], system: str, user: str) -> Schema | None:
        """A validated `schema` instance, retried on malformed replies; None after the last try."""
        instructions = (f"{system}\n\nReply with one JSON object and nothing else, matching this JSON schema:\n"
                        f"{json.dumps(schema.model_json_schema())}")
        for attempt in range(1, self.max_attempts + 1):
            try:
                text = self._invoke([("system", instructions), ("human", user)])
            except Exception:  # noqa: BLE001
                self.usage.failures += 1
                logger.exception("LLM call failed (attempt %d)", attempt)
                continue
            match = _JSON_BLOCK.search(text)
            try:
                return schema.model_validate_json(match.group(0) if match else text)
            except (ValidationError, ValueError) as error:
                self.usage.failures += 1
                logger.warning("malformed %s from LLM (attempt %d/%d): %s", schema.__name__, attempt,
                               self.max_attempts, str(error).splitlines()[0])
        logger.warning("LLM gave no valid %s; using the offline path", schema.__name__)
        return None


def build_chat_model(ctx: PCMContext):
    """ChatOpenAI for the configured endpoint; the key comes only from the environment or `.env`."""
    from dotenv import load_dotenv
    from langchain_openai import ChatOpenAI

    load_dotenv()
    api_key = os.environ.get("PCM_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY")
    if not api_key:
        raise RuntimeError("llm_model is set but neither PCM_LLM_API_KEY nor OPENAI_API_KEY is in the environment")
    return ChatOpenAI(model=ctx.llm_model, base_url=ctx.llm_base_url or None, api_key=api_key,
                      timeout=ctx.llm_timeout, max_retries=ctx.llm_max_retries, temperature=0)
