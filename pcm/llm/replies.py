"""What PCM asks an LLM for: the reply schemas, and `check_text` for replies that must be prose.

A schema's `EXAMPLE` is the JSON shown in the prompt and its `MAX_TOKENS` caps the reply
(`LLMClient.structured`); its validators refuse what could not be stored as text.
"""

from __future__ import annotations

import math
import re
from typing import ClassVar, Literal

from pydantic import BaseModel, Field, field_validator

from pcm.validation import check_unicode

MAX_TEXT_CHARS = 4000
#: the longest evidence keyword a hypothesis keeps
MAX_KEYWORD_CHARS = 40
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

    EXAMPLE: ClassVar[str] = (
        '{"relation": "contradiction", "conflict_score": 0.9, "conflicting_ids": ["m-1a2b"], '
        '"supported_ids": [], "reason": "the user changed jobs"}'
    )
    MAX_TOKENS: ClassVar[int] = 160
    relation: Literal["consistent", "novel", "contradiction"]
    conflict_score: float = Field(ge=0.0, le=1.0)
    conflicting_ids: list[str] = Field(default_factory=list)
    supported_ids: list[str] = Field(default_factory=list)
    reason: str = ""


class HypothesisDraft(BaseModel):
    EXAMPLE: ClassVar[str] = (
        '{"monologue": "They mention weekend courses in ML; maybe preparing a career change.", '
        '"hypothesis": "The user may be moving into machine learning.", '
        '"evidence_keywords": ["machine learning", "course"]}'
    )
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
        return [check_text(k, "keyword", MAX_KEYWORD_CHARS) for k in value if k.strip()]


class ExtractedFact(BaseModel):
    turn: int = Field(ge=1)
    fact: str

    @field_validator("fact")
    @classmethod
    def _fact_is_text(cls, value: str) -> str:
        return _short_text(value)


class ExtractedFacts(BaseModel):
    EXAMPLE: ClassVar[str] = (
        '{"facts": [{"turn": 1, "fact": "Caroline went to an LGBTQ support group on 7 May '
        '2023."}, {"turn": 3, "fact": "Melanie has two children."}]}'
    )
    MAX_TOKENS: ClassVar[int] = 400
    facts: list[ExtractedFact] = Field(max_length=40)
