"""Steps 1–3 of the processing flow: initial retrieval, perception, intent-masked retrieval."""

from __future__ import annotations

from pcm.config import PCMContext
from pcm.formulas import LEVELS
from pcm.llm import IntentJudgement
from pcm.models import RetrievedMemory
from pcm.nodes import domain_distribution, dump, input_text, memories, user_of, validate_input
from pcm.perception.intent import make_intent
from pcm.perception.working_memory import admit_turn, make_turn, preceding_context, render_window
from pcm.prompts import INTENT_SYSTEM
from pcm.services import Services
from pcm.state import PCMState
from pcm.world.retrieval import retrieve

RECENT_TURNS = 4


def retrieve_initial(state: PCMState, ctx: PCMContext, services: Services) -> dict:
    """Validate the input, start the turn, and retrieve without an intent mask (step 1)."""
    text = validate_input(input_text(state), ctx)
    graph = services.store.open(user_of(state))
    found = retrieve(graph, text, services.embedder.encode_one(text), ctx, intent=None, expand=False)
    usage = services.llm.usage.as_dict() if services.llm else {}
    return {"user_input": text, "turn": state.get("turn", 0) + 1, "changes": None, "initial_retrieval": dump(found),
            "judgement": None, "conflicts": [], "memory_node_id": None, "response": None, "llm_usage": usage}


def perceive(state: PCMState, ctx: PCMContext, services: Services) -> dict:
    """Working memory, intent, surprise (step 2)."""
    text = state["user_input"]
    window = list(state.get("working_memory") or [])
    recent = render_window(window, RECENT_TURNS)
    intent = None
    if services.llm is not None:
        judged = services.llm.structured(IntentJudgement, INTENT_SYSTEM.format(domains=", ".join(ctx.domains)), text)
        if judged is not None:
            scores = {d: judged.distribution.get(d, 0.0) for d in ctx.domains}
            intent = make_intent(scores) if sum(scores.values()) > 0 else None
    intent = intent or services.intent_router.classify(text, [t["content"] for t in window[-RECENT_TURNS:]])
    retrieved: list[RetrievedMemory] = memories(state.get("initial_retrieval"))
    packet, judgement = services.surprise_monitor.measure(text, retrieved, recent, ctx)
    forced = state.get("force_level")
    if forced:
        if forced not in LEVELS:
            raise ValueError(f"force_level must be one of {LEVELS}")
        packet = packet.model_copy(update={"level": forced, "level_source": "forced"})
    turn = make_turn("user", text, services.embedder.count_tokens, speaker=state.get("speaker"),
                     turn=state["turn"], timestamp=state.get("timestamp"), domain=intent.label,
                     domains=domain_distribution(intent.model_dump()),
                     dialog_ids=list(state.get("dialog_ids") or []),
                     context=preceding_context(window, state.get("timestamp"), ctx.context_turns, ctx.context_gap_minutes))
    window, evicted = admit_turn(window, turn, ctx.token_budget, ctx.eviction_size)
    return {
        "intent": intent.model_dump(mode="json"),
        "surprisal": packet.model_dump(mode="json"),
        "judgement": judgement.model_dump(mode="json") if judgement else None,
        "working_memory": window,
        "pending_consolidation": [*(state.get("pending_consolidation") or []), *evicted],
    }


def retrieve_masked(state: PCMState, ctx: PCMContext, services: Services) -> dict:
    """Intent-masked retrieval with 1-hop expansion (step 3)."""
    text = state["user_input"]
    graph = services.store.open(user_of(state))
    found = retrieve(graph, text, services.embedder.encode_one(text), ctx,
                     intent=state["intent"]["distribution"], expand=True)
    return {"retrieved": dump(found)}
