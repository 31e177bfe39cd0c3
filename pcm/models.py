"""Typed records of the memory: nodes, edges, intents, surprisal packets, audit events.

Graph state holds these as plain JSON dicts (`model_dump(mode="json")`) so the
checkpointer, the LangGraph server and Studio can all serialise them; these models
validate them at the edges.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from enum import Enum

from pydantic import BaseModel, Field, field_validator


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def as_utc(moment: datetime | str | None, field: str = "time") -> datetime:
    """Parse an ISO time (or take a datetime) as an aware UTC datetime; None is now. ValueError
    naming `field` for text that is no ISO time, or a time UTC cannot hold (year 1 or 9999
    shifted across midnight by its offset)."""
    if moment is None or moment == "":
        return utcnow()
    given = moment
    try:
        if isinstance(moment, str):
            moment = datetime.fromisoformat(moment)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return moment.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        raise ValueError(
            f"{field} {str(given)[:60]!r} is not an ISO 8601 time that UTC can hold (e.g. 2024-05-08T13:56:00+00:00)"
        ) from None


class NodeType(str, Enum):
    """What a memory is.

    The spec names entities, attributes and hypotheses. Here an attribute of a person ("User_Skill:
    Django") is a FACT: every stored fact is a claim about someone, and facts are what correction,
    maintenance and retrieval act on, so a separate attribute type would split one concept in two.
    """

    ENTITY = "entity"
    HYPOTHESIS = "hypothesis"
    FACT = "fact"
    #: a calendar day: each fact and hypothesis links to the day it was said on (`said_on`), so the
    #: pieces of a story told in one sitting are one hop apart through it (`pcm.world.story`)
    DAY = "day"


#: the memories retrieved by similarity (entities are found by name)
RETRIEVABLE_TYPES = (NodeType.FACT, NodeType.HYPOTHESIS)
#: what a person reads as memories: every node but the day nodes, which are the time axis
SHOWN_TYPES = (*RETRIEVABLE_TYPES, NodeType.ENTITY)
#: their types as stored in a node's attributes
RETRIEVABLE_VALUES = frozenset(t.value for t in RETRIEVABLE_TYPES)


class MemorySource(BaseModel):
    """Where a memory came from: the thread, turn and dialog ids it was built from."""

    thread_id: str | None = None
    turn: int | None = None
    dialog_ids: list[str] = Field(default_factory=list)
    speaker: str | None = None
    session_time: datetime | None = None


class MemoryNode(BaseModel):
    id: str = Field(default_factory=lambda: f"m-{uuid.uuid4().hex[:12]}")
    content: str
    type: NodeType
    domain: str | None = None
    domain_distribution: dict[str, float] | None = None
    weight: float = Field(ge=0.0, le=1.0)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    last_accessed: datetime = Field(default_factory=utcnow)
    decayed_at: datetime | None = None
    keywords: list[str] = Field(default_factory=list)
    source: MemorySource = Field(default_factory=MemorySource)
    #: the turns that came just before this one in its conversation, for indexing only (what a
    #: short turn such as "That's awesome! What made you pick it?" is about); never shown as content
    context: str | None = None
    #: the router's class-balanced P(low, medium, high) for the turn that stated this fact, from
    #: which the user's own level prior is estimated (`pcm.formulas.adapted_level_prior`)
    router_posterior: list[float] | None = None

    @field_validator("content")
    @classmethod
    def _content_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("memory content must not be empty")
        return value


class MemoryEdge(BaseModel):
    source: str
    target: str
    relation: str
    weight: float = Field(ge=0.0, le=1.0)
    timestamp: datetime = Field(default_factory=utcnow)


class Intent(BaseModel):
    label: str
    confidence: float
    distribution: dict[str, float]


class SurprisalPacket(BaseModel):
    """What the surprise monitor measured for one input, and the level it routes to."""

    content: str
    scorer: str
    s_raw: float
    retrieval_entropy: float
    s_eff: float
    theta_low: float
    theta_high: float
    level: str
    level_source: str = "threshold"
    level_probabilities: dict[str, float] = Field(default_factory=dict)
    signals: dict[str, float] = Field(default_factory=dict)
    retrieved_context: list[str] = Field(default_factory=list)
    relations: dict[str, dict[str, float]] = Field(default_factory=dict)
    """The relation model's P(consistent/novel/contradiction) of the input to each judged memory, by id."""
    router_posterior: list[float] | None = None
    """The cheap router's class-balanced P(low, medium, high) of this turn, before any prior."""
    level_prior: list[float] | None = None
    """The prior (low, medium, high) the router used: the configured one times the user's own."""


class RetrievedMemory(BaseModel):
    id: str
    content: str
    type: NodeType
    domain: str | None
    weight: float
    similarity: float
    intent_relevance: float
    score: float
    via: str = "search"
    dialog_ids: list[str] = Field(default_factory=list)
    speaker: str | None = None
    updated_at: datetime | None = None


class MemoryChange(BaseModel):
    """One audit event: a memory created or re-weighted, and why."""

    turn: int | None = None
    thread_id: str | None = None
    node_id: str
    content: str
    old_weight: float | None
    new_weight: float
    reason: str
    agent: str
    timestamp: datetime = Field(default_factory=utcnow)
    type: NodeType | None = None  # the memory's type when created or when the change set it
