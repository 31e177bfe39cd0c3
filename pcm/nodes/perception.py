"""Steps 1–3 of the processing flow: initial retrieval, perception, intent-masked retrieval."""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig

from pcm.config import PCMContext
from pcm.llm import add_usage
from pcm.models import RetrievedMemory
from pcm.nodes import (
    domain_distribution,
    dump,
    memories,
    turn_conflicts,
    turn_llm,
    turn_timestamp,
    turn_user,
    usage_update,
    user_of,
)
from pcm.perception.intent import classify_intent
from pcm.perception.surprise import TurnSignals
from pcm.perception.working_memory import (
    in_dialogue,
    make_turn,
    preceding_context,
    push_turn,
    render_window,
    replies_to_question,
    said_in_episode,
)
from pcm.routing import decide, user_level_prior
from pcm.services import Services
from pcm.state import PCMState
from pcm.validation import input_text
from pcm.world.dates import said_at
from pcm.world.knowledge_graph import WeightedKnowledgeGraph
from pcm.world.retrieval import life_state_clashes, retrieve

RECENT_TURNS = 4


def retrieve_initial(state: PCMState, config: RunnableConfig, ctx: PCMContext, services: Services) -> dict:
    """Start the turn: settle whose memory it is (locked until `persist` commits it), reset its LLM
    usage, and retrieve without an intent mask (step 1). The input was validated on the graph's
    entry edge."""
    text = input_text(state)
    user = turn_user(state, config)
    turn = services.store.begin_turn(user)
    try:
        # no time key: what a turn revises or confirms was seldom said on the day it names, or today
        found = retrieve(
            turn.memory,
            text,
            services.embedder.encode_one(text),
            ctx,
            intent=None,
            expand=False,
            use_time=False,
            use_answer_type=False,
        )
        found_ids = {m.id for m in found}
        clashing = life_state_clashes(turn.memory, text, state.get("speaker"), ctx)
    except BaseException:
        turn.abort()
        raise
    committed = state.get("committed_turn")
    return {
        "user_input": text,
        "user_id": user,
        "turn": (state.get("turn", 0) if committed is None else committed) + 1,
        "turn_owner": turn.owner,
        "turn_window": list(state.get("working_memory") or []),
        "turn_pending": list(state.get("pending_consolidation") or []),
        "changes": None,
        "initial_retrieval": dump([*found, *(m for m in clashing if m.id not in found_ids)]),
        "life_state_clashes": [m.id for m in clashing],
        "judgement": None,
        "conflicts": [],
        "memory_node_id": None,
        "response": None,
        "llm_usage": add_usage(None, None) if services.llm is not None else {},
    }


def perceive(state: PCMState, ctx: PCMContext, services: Services) -> dict:
    """Working memory, intent, surprise (step 2). The window is staged in `turn_window`; `persist`
    commits it to `working_memory`."""
    text = state["user_input"]
    window = list(state.get("turn_window") or [])
    recent = render_window(window, RECENT_TURNS)
    llm = turn_llm(state, ctx, services)
    intent = classify_intent(text, [t["content"] for t in window[-RECENT_TURNS:]], services.intent_router, ctx, llm)
    retrieved: list[RetrievedMemory] = memories(state.get("initial_retrieval"))
    monitor = services.monitor(llm)
    graph = services.store.open(user_of(state))
    turn = monitor.observe(
        text,
        retrieved,
        recent,
        ctx,
        speaker=state.get("speaker"),
        clashing=state.get("life_state_clashes"),
        answers_question=replies_to_question(
            window, state.get("speaker"), state.get("timestamp"), ctx.context_gap_minutes
        ),
        level_prior=user_level_prior(graph, ctx),
        memory_size=graph.retrievable_count(),
    )
    turn.revises_this_episode = lambda: _revises_this_episode(graph, turn, window, state, ctx, services)
    decision = decide(turn, ctx)
    packet, judgement = monitor.report(
        turn, decision.level, decision.source, decision.probabilities, decision.judgement, decision.posterior, ctx
    )
    forced = state.get("force_level")
    if forced:
        packet = packet.model_copy(update={"level": forced, "level_source": "forced"})
    turn = make_turn(
        "user",
        text,
        services.embedder.count_tokens,
        speaker=state.get("speaker"),
        turn=state["turn"],
        timestamp=turn_timestamp(state),
        domain=intent.label,
        domains=domain_distribution(intent.model_dump()),
        dialog_ids=list(state.get("dialog_ids") or []),
        context=preceding_context(window, state.get("timestamp"), ctx.context_turns, ctx.context_gap_minutes),
    )
    window, evicted = push_turn(window, turn, ctx.token_budget, ctx.eviction_size)
    return {
        "intent": intent.model_dump(mode="json"),
        "surprisal": packet.model_dump(mode="json"),
        "judgement": judgement.model_dump(mode="json") if judgement else None,
        "turn_window": window,
        "turn_pending": [*(state.get("turn_pending") or []), *evicted],
        **usage_update(state, llm),
    }


def _revises_this_episode(
    graph: WeightedKnowledgeGraph, turn: TurnSignals, window: list, state: PCMState, ctx: PCMContext, services: Services
) -> bool:
    """Whether the turn is part of a dialogue (`in_dialogue`) and every memory it would correct
    (`turn_conflicts`) was said in the same episode (`said_in_episode`): a speaker telling their story
    ("I used to compete…") after what they said minutes ago ("Dance is my go-to…")."""
    speaker, timestamp, gap = state.get("speaker"), state.get("timestamp"), ctx.context_gap_minutes
    if not in_dialogue(window, speaker, timestamp, gap):
        return False
    suspects = turn_conflicts(turn.memories, ctx, services, speaker, turn.relations)
    return bool(suspects) and all(said_in_episode(said_at(graph.attrs(m.id)), timestamp, gap) for m in suspects)


def retrieve_masked(state: PCMState, ctx: PCMContext, services: Services) -> dict:
    """Intent-masked retrieval with 1-hop expansion (step 3)."""
    text = state["user_input"]
    graph = services.store.open(user_of(state))
    found = retrieve(
        graph,
        text,
        services.embedder.encode_one(text),
        ctx,
        intent=state["intent"]["distribution"],
        expand=True,
        use_time=False,  # as in retrieve_initial: what the turn revises or confirms
        follow_entities=False,
    )
    return {"retrieved": dump(found)}
