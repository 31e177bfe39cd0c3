"""Steps 5–7: consolidate evicted turns, respond (only with an LLM), persist (the commit)."""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig

from pcm.config import PCMContext
from pcm.evolution.consolidation import consolidate_turns, extract_facts
from pcm.nodes import domain_distribution, dump, memories, thread_of, turn_llm, turn_timestamp, usage_update, user_of
from pcm.perception.working_memory import make_turn, preceding_context, push_turn
from pcm.prompts import RESPONSE_SYSTEM, format_memories
from pcm.services import Services
from pcm.state import PCMState


def consolidate(state: PCMState, config: RunnableConfig, ctx: PCMContext, services: Services) -> dict:
    """Tag this turn with its memory id, then move evicted turns into long-term memory (step 5);
    with an LLM, extract atomic facts once `llm_fact_batch` consolidated turns are waiting."""
    node_id = state.get("memory_node_id")
    window = [
        dict(t, node_id=node_id) if t.get("turn") == state["turn"] and t["role"] == "user" else t
        for t in state.get("turn_window") or []
    ]
    pending = state.get("turn_pending") or []
    llm = turn_llm(state, ctx, services)
    queue = list(state.get("pending_extraction") or [])
    changes = []
    if pending:
        graph = services.store.open(user_of(state))
        changes, consolidated = consolidate_turns(graph, pending, thread_of(config), ctx)
        if llm is not None:
            queue.extend(consolidated)
            if len(queue) >= ctx.llm_fact_batch:
                changes += extract_facts(graph, queue, thread_of(config), ctx, llm)
                queue = []
    return {
        "turn_window": window,
        "turn_pending": [],
        "turn_extraction": queue,
        "changes": dump(changes),
        **usage_update(state, llm),
    }


def respond(state: PCMState, ctx: PCMContext, services: Services) -> dict:
    """Reply from the retrieved memories (step 6); skipped on the offline path and with
    `llm_reply` off. A reply that fails validation is neither returned nor remembered."""
    llm = turn_llm(state, ctx, services)
    if llm is None or not ctx.llm_reply:
        return {}
    reply = llm.complete(
        RESPONSE_SYSTEM.format(memories=format_memories(memories(state.get("retrieved")))), state["user_input"]
    )
    if reply is None:
        return usage_update(state, llm)
    intent = state.get("intent") or {}
    window = list(state.get("turn_window") or [])
    turn = make_turn(
        "assistant",
        reply,
        services.embedder.count_tokens,
        turn=state["turn"],
        timestamp=turn_timestamp(state),
        domain=intent.get("label"),
        domains=domain_distribution(intent),
        context=preceding_context(window, state.get("timestamp"), ctx.context_turns, ctx.context_gap_minutes),
    )
    window, evicted = push_turn(window, turn, ctx.token_budget, ctx.eviction_size)
    return {"response": reply, "turn_window": window, "turn_pending": evicted, **usage_update(state, llm)}


#: inputs that describe one turn; cleared when it ends so a checkpointed thread never reuses them
TURN_INPUTS = {
    "user_input": None,
    "speaker": None,
    "timestamp": None,
    "dialog_ids": [],
    "force_level": None,
    "target_ids": [],
    "note": None,
    "message_id": None,
}


def persist(state: PCMState, ctx: PCMContext, services: Services) -> dict:
    """Commit the turn (step 7): long-term memory in one transaction (with the message id, if
    any), then working memory, the turn counter and the reply, and clear the turn's inputs.
    Nothing of a turn is committed unless this node runs. `llm_usage` already holds what this
    turn spent on the LLM (every attempt, failed ones included)."""
    message_id = state.get("message_id")
    services.store.turn(user_of(state), state["turn_owner"]).commit([message_id] if message_id else [])
    update = {
        "working_memory": state.get("turn_window") or [],
        "pending_consolidation": state.get("turn_pending") or [],
        "committed_turn": state["turn"],
        "turn_window": None,
        "turn_pending": None,
        "turn_owner": None,
        **TURN_INPUTS,
    }
    if state.get("turn_extraction") is not None:
        update["pending_extraction"] = state["turn_extraction"]
        update["turn_extraction"] = None
    if state.get("response"):
        update["messages"] = [AIMessage(content=state["response"])]
    return update


def flush_working_memory(state: PCMState, thread_id: str | None, ctx: PCMContext, services: Services) -> list[dict]:
    """Consolidate every turn still in working memory (end of an ingestion) into the user's open
    turn, and extract the facts of every turn still waiting for it; the caller commits it.
    Returns the changes."""
    turns = [*(state.get("pending_consolidation") or []), *(state.get("working_memory") or [])]
    queue = list(state.get("pending_extraction") or [])
    if not turns and not queue:
        return []
    graph = services.store.open(user_of(state))
    changes, consolidated = consolidate_turns(graph, turns, thread_id, ctx)
    if services.llm is not None:
        queue.extend(consolidated)
        for start in range(0, len(queue), ctx.llm_fact_batch):
            llm = services.llm.for_turn(ctx.llm_turn_deadline)
            changes += extract_facts(graph, queue[start : start + ctx.llm_fact_batch], thread_id, ctx, llm)
    return dump(changes)
