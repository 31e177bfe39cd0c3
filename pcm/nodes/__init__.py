"""Graph nodes: small functions `(state, ctx, services) -> partial state update`.

`pcm.graph` binds them to a Services object and the runtime context. This module also
holds what every node shares: reading and validating one turn's input (all of it is
checked before anything changes), whose memory the turn is about, and the LLM client
bound to what is left of the turn's LLM time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from langchain_core.messages import HumanMessage

from pcm.config import PCMContext
from pcm.evolution import TurnInfo
from pcm.formulas import LEVELS
from pcm.llm import LLMClient, add_usage, check_unicode
from pcm.models import RetrievedMemory, as_utc
from pcm.state import PCMState
from pcm.world.store import validate_user_id

if TYPE_CHECKING:
    from pcm.services import Services

DEFAULT_USER = "default"
MAX_SPEAKER_CHARS = 200
MAX_NOTE_CHARS = 2000
MAX_IDS = 100
MAX_ID_CHARS = 200


def input_text(state: Mapping) -> object:
    """The user's words: `user_input`, else the last human message (for parent agents)."""
    text = state.get("user_input")
    if text is None:
        humans = [m for m in state.get("messages") or [] if isinstance(m, HumanMessage)]
        text = humans[-1].content if humans else ""
    return text


def validate_input(text: object, ctx: PCMContext) -> str:
    """Reject what must not reach memory, with a message that says why."""
    if not isinstance(text, str):
        raise ValueError("user_input must be a string")
    if not text.strip():
        raise ValueError("user_input is empty")
    if len(text) > ctx.max_input_chars:
        raise ValueError(f"user_input has {len(text)} characters; the limit is {ctx.max_input_chars} "
                         "(max_input_chars)")
    if "\x00" in text:
        raise ValueError("user_input contains a NUL character")
    return check_unicode(text, "user_input")


def _optional_text(value: object, name: str, max_chars: int) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string or null, got {type(value).__name__}")
    if len(value) > max_chars:
        raise ValueError(f"{name} has {len(value)} characters; at most {max_chars}")
    if any(ord(c) < 32 and c not in "\t\n" for c in value):
        raise ValueError(f"{name} must not contain control characters")
    check_unicode(value, name)


def _id_list(value: object, name: str) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        raise ValueError(f"{name} must be a list of strings, got {type(value).__name__}")
    if len(value) > MAX_IDS:
        raise ValueError(f"{name} has {len(value)} entries; at most {MAX_IDS}")
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise ValueError(f"{name} must hold non-empty strings, got {item!r}")
        _optional_text(item, name, MAX_ID_CHARS)


def validate_turn(state: Mapping, ctx: PCMContext) -> str:
    """Check every field of one turn's input before anything changes; ValueError naming the
    field. Returns the text. (`target_ids` are checked against memory by `check_targets`.)"""
    text = validate_input(input_text(state), ctx)
    if state.get("user_id") is not None:
        validate_user_id(state["user_id"])
    _optional_text(state.get("speaker"), "speaker", MAX_SPEAKER_CHARS)
    timestamp = state.get("timestamp")
    if timestamp is not None:
        if not isinstance(timestamp, str):
            raise ValueError(f"timestamp must be an ISO 8601 string, got {type(timestamp).__name__}")
        try:
            as_utc(timestamp)
        except ValueError:
            raise ValueError(f"timestamp {timestamp[:60]!r} is not an ISO 8601 time "
                             "(e.g. 2024-05-08T13:56:00+00:00)") from None
    _id_list(state.get("dialog_ids"), "dialog_ids")
    force_level = state.get("force_level")
    if force_level is not None and force_level not in LEVELS:
        raise ValueError(f"force_level must be one of {', '.join(LEVELS)} or null, got {force_level!r}")
    _id_list(state.get("target_ids"), "target_ids")
    if state.get("target_ids") and force_level != "high":
        raise ValueError("target_ids name memories to correct; they need force_level 'high'")
    _optional_text(state.get("note"), "note", MAX_NOTE_CHARS)
    return text


def check_targets(target_ids: list[str] | None, user_id: str, services: "Services") -> None:
    """ValueError unless every id in `target_ids` is a memory of `user_id`."""
    if not target_ids:
        return
    if not services.store.exists(user_id):
        raise ValueError(f"target_ids: user {user_id!r} has no memory yet")
    graph = services.store.open(user_id)
    missing = [i for i in target_ids if i not in graph]
    if missing:
        raise ValueError(f"target_ids name no memory of this user: {', '.join(missing[:5])}")


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


def turn_info(state: PCMState, thread_id: str | None) -> TurnInfo:
    intent = state.get("intent") or {}
    return TurnInfo(text=input_text(state), turn=state.get("turn", 0), thread_id=thread_id,
                    timestamp=as_utc(state.get("timestamp")), domain=intent.get("label"),
                    speaker=state.get("speaker"), dialog_ids=list(state.get("dialog_ids") or []),
                    domains=domain_distribution(intent), context=current_turn(state).get("context"),
                    router_posterior=(state.get("surprisal") or {}).get("router_posterior"))


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
