"""Graph state. Values are plain JSON (dicts, lists, strings) so that the checkpointer,
the LangGraph server and Studio can all store and show them.

`InputState` is what a caller (or a parent graph) gives (`force_level`, `target_ids` and
`note` let a tool route an explicit correction through the normal path; `message_id` makes an
ingestion idempotent), `OutputState` what it gets
back; `PCMState` adds the internal, checkpointed keys (working memory persists
between turns of a thread).
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


def turn_changes(current: list[dict] | None, update: list[dict] | None) -> list[dict]:
    """Memory changes accumulate within a turn; the turn's first node resets them with None."""
    if update is None:
        return []
    return [*(current or []), *update]


class InputState(TypedDict, total=False):
    user_input: str
    user_id: str
    speaker: str | None
    timestamp: str | None
    dialog_ids: list[str]
    messages: Annotated[list[AnyMessage], add_messages]
    force_level: str | None
    target_ids: list[str]
    note: str | None
    message_id: str | None


class OutputState(TypedDict, total=False):
    turn: int
    intent: dict[str, Any]
    surprisal: dict[str, Any]
    retrieved: list[dict[str, Any]]
    agent: str
    changes: Annotated[list[dict[str, Any]], turn_changes]
    response: str | None
    llm_usage: dict[str, int]
    messages: Annotated[list[AnyMessage], add_messages]


class PCMState(InputState, OutputState, total=False):
    # committed by `persist` only, so a turn that fails leaves them as they were
    working_memory: list[dict[str, Any]]
    pending_consolidation: list[dict[str, Any]]
    committed_turn: int
    # this turn's staged copies of the above, and the store turn it holds
    turn_window: list[dict[str, Any]] | None
    turn_pending: list[dict[str, Any]] | None
    turn_owner: str | None
    pending_extraction: list[dict[str, Any]]
    turn_extraction: list[dict[str, Any]] | None
    initial_retrieval: list[dict[str, Any]]
    # the facts whose life state the turn excludes (`pcm.world.retrieval.life_state_clashes`)
    life_state_clashes: list[str]
    judgement: dict[str, Any] | None
    conflicts: list[dict[str, Any]]
    memory_node_id: str | None
