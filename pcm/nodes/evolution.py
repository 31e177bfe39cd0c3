"""Step 4: the three evolution branches (each compiled as its own subgraph in `pcm.graph`; the
conditional edge that picks one is `pcm.routing.branch_of_level`)."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.runnables import RunnableConfig

from pcm.config import PCMContext
from pcm.evolution.correction import apply_correction
from pcm.evolution.maintenance import apply_maintenance
from pcm.evolution.profiling import apply_profiling
from pcm.llm import RelationJudgement
from pcm.models import RetrievedMemory, SurprisalPacket
from pcm.nodes import dump, memories, thread_of, turn_conflicts, turn_info, turn_llm, usage_update, user_of
from pcm.services import Services
from pcm.state import PCMState


def evolution_context(state: PCMState) -> list[RetrievedMemory]:
    """C_t, the memories the surprise was measured against (initial retrieval), then the
    intent-masked hits not already in it: the spec's updates apply to C_t."""
    initial = memories(state.get("initial_retrieval"))
    seen = {m.id for m in initial}
    return initial + [m for m in memories(state.get("retrieved")) if m.id not in seen]


def diagnose_conflicts(state: PCMState, ctx: PCMContext, services: Services) -> dict:
    """Which memories the input contradicts: those named by the caller (`target_ids`), else the
    LLM's diagnosis if configured, else the offline rule."""
    if state.get("target_ids"):
        graph = services.store.open(user_of(state))
        named = [graph.node(i) for i in state["target_ids"]]
        return {
            "conflicts": [
                RetrievedMemory(
                    id=n.id,
                    content=n.content,
                    type=n.type,
                    domain=n.domain,
                    weight=n.weight,
                    similarity=1.0,
                    intent_relevance=1.0,
                    score=n.weight,
                    via="named",
                    speaker=n.source.speaker,
                ).model_dump(mode="json")
                for n in named
            ]
        }
    retrieved = evolution_context(state)
    judgement = RelationJudgement.model_validate(state["judgement"]) if state.get("judgement") else None
    llm = turn_llm(state, ctx, services)
    if judgement is None and llm is not None:
        judgement = services.monitor(llm).judge(state["user_input"], retrieved)
    relations = (state.get("surprisal") or {}).get("relations") or {}
    return {
        "conflicts": dump(turn_conflicts(retrieved, ctx, services, state.get("speaker"), relations, judgement)),
        "judgement": judgement.model_dump(mode="json") if judgement else None,
        **usage_update(state, llm),
    }


def correct(state: PCMState, config: RunnableConfig, ctx: PCMContext, services: Services) -> dict:
    graph = services.store.open(user_of(state))
    node_id, changes = apply_correction(
        graph,
        turn_info(state, thread_of(config)),
        memories(state.get("conflicts")),
        SurprisalPacket.model_validate(state["surprisal"]),
        ctx,
        note=state.get("note"),
    )
    return {"agent": "correction", "memory_node_id": node_id, "changes": dump(changes)}


def support_judge(
    state: PCMState, ctx: PCMContext, services: Services, text: str
) -> Callable[[list[RetrievedMemory]], dict[str, dict[str, float]]]:
    """P(relation) of `text` against given memories, by id: perception's verdicts, plus the relation
    model's for those it did not judge."""
    known = (state.get("surprisal") or {}).get("relations") or {}
    pair_judge = services.pair_judge(ctx)

    def judge(judged: list[RetrievedMemory]) -> dict[str, dict[str, float]]:
        return {**known, **pair_judge(text, [m for m in judged if m.id not in known])}

    return judge


def profile(state: PCMState, config: RunnableConfig, ctx: PCMContext, services: Services) -> dict:
    graph = services.store.open(user_of(state))
    llm = turn_llm(state, ctx, services)
    info = turn_info(state, thread_of(config))
    node_id, changes = apply_profiling(
        graph,
        info,
        evolution_context(state),
        SurprisalPacket.model_validate(state["surprisal"]),
        ctx,
        llm,
        support_judge(state, ctx, services, info.text),
    )
    return {"agent": "profiling", "memory_node_id": node_id, "changes": dump(changes), **usage_update(state, llm)}


def maintain(state: PCMState, config: RunnableConfig, ctx: PCMContext, services: Services) -> dict:
    graph = services.store.open(user_of(state))
    info = turn_info(state, thread_of(config))
    judge = support_judge(state, ctx, services, info.text)
    node_id, changes = apply_maintenance(graph, info, evolution_context(state), ctx, judge)
    return {"agent": "maintenance", "memory_node_id": node_id, "changes": dump(changes)}
