"""Steps 5–7: consolidate evicted turns, respond (only with an LLM), persist."""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig

from pcm.config import PCMContext
from pcm.evolution.consolidation import consolidate_turns
from pcm.nodes import domain_distribution, dump, memories, thread_of, user_of
from pcm.perception.working_memory import admit_turn, make_turn, preceding_context
from pcm.prompts import RESPONSE_SYSTEM, format_memories
from pcm.services import Services
from pcm.state import PCMState


def consolidate(state: PCMState, config: RunnableConfig, ctx: PCMContext, services: Services) -> dict:
    """Tag this turn with its memory id, then move evicted turns into long-term memory (step 5)."""
    node_id = state.get("memory_node_id")
    window = [dict(t, node_id=node_id) if t.get("turn") == state["turn"] and t["role"] == "user" else t
              for t in state.get("working_memory") or []]
    pending = state.get("pending_consolidation") or []
    changes = []
    if pending:
        graph = services.store.open(user_of(state))
        changes = consolidate_turns(graph, pending, thread_of(config), ctx, services.llm)
    return {"working_memory": window, "pending_consolidation": [], "changes": dump(changes)}


def respond(state: PCMState, ctx: PCMContext, services: Services) -> dict:
    """Reply from the retrieved memories (step 6); skipped on the offline path."""
    if services.llm is None:
        return {}
    reply = services.llm.complete(RESPONSE_SYSTEM.format(memories=format_memories(memories(state.get("retrieved")))),
                                  state["user_input"])
    if reply is None:
        return {}
    intent = state.get("intent") or {}
    window = list(state.get("working_memory") or [])
    turn = make_turn("assistant", reply, services.embedder.count_tokens, turn=state["turn"],
                     timestamp=state.get("timestamp"), domain=intent.get("label"), domains=domain_distribution(intent),
                     context=preceding_context(window, state.get("timestamp"), ctx.context_turns,
                                               ctx.context_gap_minutes))
    window, evicted = admit_turn(window, turn, ctx.token_budget, ctx.eviction_size)
    return {"response": reply, "messages": [AIMessage(content=reply)], "working_memory": window,
            "pending_consolidation": evicted}


#: inputs that describe one turn; cleared when it ends so a checkpointed thread never reuses them
TURN_INPUTS = {"user_input": None, "speaker": None, "timestamp": None, "dialog_ids": [], "force_level": None,
               "target_ids": [], "note": None}


def persist(state: PCMState, ctx: PCMContext, services: Services) -> dict:
    """Save long-term memory atomically (step 7); report this turn's LLM usage; clear the turn's inputs."""
    services.store.open(user_of(state)).save()
    if services.llm is None:
        return {"llm_usage": {}, **TURN_INPUTS}
    start = state.get("llm_usage") or {}
    now = services.llm.usage.as_dict()
    return {"llm_usage": {k: v - start.get(k, 0) for k, v in now.items()}, **TURN_INPUTS}


def flush_working_memory(state: PCMState, thread_id: str | None, ctx: PCMContext, services: Services) -> list[dict]:
    """Consolidate every turn still in working memory (end of an ingestion); returns the changes."""
    turns = [*(state.get("pending_consolidation") or []), *(state.get("working_memory") or [])]
    if not turns:
        return []
    graph = services.store.open(user_of(state))
    changes = consolidate_turns(graph, turns, thread_id, ctx, services.llm)
    graph.save()
    return dump(changes)
