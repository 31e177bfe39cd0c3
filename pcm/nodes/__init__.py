"""Graph nodes: small functions `(state, ctx, services) -> partial state update`.

`pcm.graph` binds them to a Services object and the runtime context. This module also
holds what every node shares: whose memory the turn is about, the LLM client bound to what
is left of the turn's LLM time, and the turn's facts as evolution reads them. (The input is
checked once, on the graph's entry edge: `pcm.validation`.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pcm.config import PCMContext
from pcm.evolution import TurnInfo
from pcm.evolution.correction import find_conflicts
from pcm.llm import LLMClient, RelationJudgement, add_usage
from pcm.models import RetrievedMemory, as_utc, utcnow
from pcm.state import PCMState
from pcm.validation import input_text, validate_user_id

if TYPE_CHECKING:
    from pcm.services import Services

DEFAULT_USER = "default"


def authenticated_user(config: Mapping | None) -> str | None:
    """The identity LangGraph's custom auth put in the run's config; None when auth is off
    (the in-process API, or a server without `auth` in `langgraph.json`)."""
    configurable = (config or {}).get("configurable") or {}
    user = configurable.get("langgraph_auth_user")
    if user is None:
        return None
    identity = configurable.get("langgraph_auth_user_id")
    if not identity:
        identity = user.get("identity") if isinstance(user, Mapping) else getattr(user, "identity", None)
    if not identity:
        raise PermissionError("the authenticated user has no identity")
    return validate_user_id(identity)


def turn_user(state: Mapping, config: Mapping | None) -> str:
    """Whose memory this turn reads and writes: the authenticated identity when auth is on
    (a client cannot name another user), else `user_id` from the input."""
    return authenticated_user(config) or validate_user_id(state.get("user_id") or DEFAULT_USER)


def user_of(state: PCMState) -> str:
    """The turn's user, as `retrieve_initial` settled it (see `turn_user`)."""
    return validate_user_id(state.get("user_id") or DEFAULT_USER)


def turn_llm(state: PCMState, ctx: PCMContext, services: "Services") -> LLMClient | None:
    """The LLM client for one step of the turn, with what is left of the turn's LLM time
    (`llm_turn_deadline` minus what its earlier steps spent); None on the offline path."""
    if services.llm is None:
        return None
    return services.llm.for_turn(ctx.llm_turn_deadline - (state.get("llm_usage") or {}).get("seconds", 0.0))


def usage_update(state: PCMState, llm: LLMClient | None) -> dict:
    """The state update that adds what `llm` spent to the turn's `llm_usage`."""
    return {"llm_usage": add_usage(state.get("llm_usage"), llm.usage)} if llm is not None else {}


def thread_of(config: dict | None) -> str | None:
    return ((config or {}).get("configurable") or {}).get("thread_id")


def turn_timestamp(state: PCMState) -> str:
    """The turn's time as working memory records it: its `timestamp`, else the moment it is processed.
    Without a time no later turn could tell whether it belongs to the same episode (its context, the
    question it answers, the dialogue it is part of: `pcm.perception.working_memory`)."""
    return state.get("timestamp") or utcnow().isoformat()


def turn_info(state: PCMState, thread_id: str | None) -> TurnInfo:
    intent = state.get("intent") or {}
    return TurnInfo(
        text=input_text(state),
        turn=state.get("turn", 0),
        thread_id=thread_id,
        timestamp=as_utc(state.get("timestamp")),
        domain=intent.get("label"),
        speaker=state.get("speaker"),
        dialog_ids=list(state.get("dialog_ids") or []),
        domains=domain_distribution(intent),
        context=current_turn(state).get("context"),
        router_posterior=(state.get("surprisal") or {}).get("router_posterior"),
    )


def current_turn(state: PCMState) -> dict:
    """This turn's entry in working memory (or among the turns it just evicted); {} before perception.

    Perception stages the window in `turn_window`/`turn_pending` (committed to `working_memory` only
    by `persist`), so those are read first: the committed window does not hold this turn yet."""
    staged = [*(state.get("turn_pending") or []), *(state.get("turn_window") or [])]
    committed = [*(state.get("pending_consolidation") or []), *(state.get("working_memory") or [])]
    for turn in reversed(staged or committed):
        if turn.get("turn") == state.get("turn") and turn.get("role") == "user":
            return turn
    return {}


def domain_distribution(intent: dict) -> dict[str, float] | None:
    """The intent distribution as stored with a memory (4 decimals are plenty)."""
    distribution = intent.get("distribution")
    return {d: round(p, 4) for d, p in distribution.items()} if distribution else None


def memories(rows: list[dict] | None) -> list[RetrievedMemory]:
    return [RetrievedMemory.model_validate(r) for r in rows or []]


def dump(items) -> list[dict]:
    return [item.model_dump(mode="json") for item in items]


def turn_conflicts(
    retrieved: list[RetrievedMemory],
    ctx: PCMContext,
    services: "Services",
    speaker: str | None,
    relations: Mapping[str, Mapping[str, float]],
    judgement: RelationJudgement | None = None,
) -> list[RetrievedMemory]:
    """The memories a turn contradicts (`find_conflicts`), at the relation model's contradiction
    threshold when it judged any."""
    tau = services.pair_judge(ctx).thresholds.contradiction if relations else 0.5
    return find_conflicts(retrieved, ctx, judgement, speaker=speaker, relations=dict(relations), tau_contradiction=tau)
