"""Graph nodes: small functions `(state, ctx, services) -> partial state update`.

`pcm.graph` binds them to a Services object and the runtime context.
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from pcm.config import PCMContext
from pcm.evolution import TurnInfo
from pcm.models import RetrievedMemory, as_utc
from pcm.state import PCMState
from pcm.world.store import validate_user_id

DEFAULT_USER = "default"


def input_text(state: PCMState) -> str:
    """The user's words: `user_input`, else the last human message (for parent agents)."""
    text = state.get("user_input")
    if text is None:
        humans = [m for m in state.get("messages") or [] if isinstance(m, HumanMessage)]
        text = humans[-1].content if humans else None
    return text if isinstance(text, str) else ""


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
    return text


def user_of(state: PCMState) -> str:
    return validate_user_id(state.get("user_id") or DEFAULT_USER)


def thread_of(config: dict | None) -> str | None:
    return ((config or {}).get("configurable") or {}).get("thread_id")


def turn_info(state: PCMState, thread_id: str | None) -> TurnInfo:
    intent = state.get("intent") or {}
    return TurnInfo(text=input_text(state), turn=state.get("turn", 0), thread_id=thread_id,
                    timestamp=as_utc(state.get("timestamp")), domain=intent.get("label"),
                    speaker=state.get("speaker"), dialog_ids=list(state.get("dialog_ids") or []),
                    domains=domain_distribution(intent), context=current_turn(state).get("context"))


def current_turn(state: PCMState) -> dict:
    """This turn's entry in working memory (or among the turns it just evicted); {} before perception."""
    for turn in reversed([*(state.get("pending_consolidation") or []), *(state.get("working_memory") or [])]):
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
