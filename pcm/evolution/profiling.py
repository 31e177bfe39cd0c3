"""Profiling (medium surprise): keep the novel observation and write a HYPOTHESIS about the user.

w_init = σ(S_eff) mapped into [0.3, 0.5]; `derived_from` edges to the observation and
the closest memory. Offline, the hypothesis is built from the input and the closest
memory, with the input's new words as evidence keywords: a later turn that uses them
confirms it (implicit verification, see maintenance). With an LLM it comes from an
internal monologue.
"""

from __future__ import annotations

from pcm.config import PCMContext
from pcm.evolution import TurnInfo, write_memory
from pcm.formulas import hypothesis_weight
from pcm.llm import HypothesisDraft, LLMClient
from pcm.models import MemoryChange, MemoryEdge, NodeType, RetrievedMemory, SurprisalPacket
from pcm.prompts import HYPOTHESIS_SYSTEM, relation_prompt
from pcm.world.knowledge_graph import WeightedKnowledgeGraph
from pcm.world.text import content_words, extract_entities

AGENT = "profiling"


def closest_memory(retrieved: list[RetrievedMemory]) -> RetrievedMemory | None:
    return next((m for m in retrieved if m.via == "search"), None)


def draft_hypothesis(info: TurnInfo, retrieved: list[RetrievedMemory], llm: LLMClient | None) -> HypothesisDraft:
    closest = closest_memory(retrieved)
    if llm is not None:
        draft = llm.structured(HypothesisDraft, HYPOTHESIS_SYSTEM, relation_prompt(info.text, retrieved))
        if draft is not None and draft.hypothesis.strip():
            return draft
    known = set(content_words(closest.content)) if closest else set()
    keywords = [w for w in dict.fromkeys(extract_entities(info.text) + content_words(info.text))
                if w.lower() not in known][:6]
    return HypothesisDraft(monologue="offline: novel input that contradicts nothing retrieved",
                           hypothesis=f"Possibly a new direction{' for ' + info.speaker if info.speaker else ''}: "
                                      f"{info.text[:240]}",
                           evidence_keywords=keywords)


def apply_profiling(graph: WeightedKnowledgeGraph, info: TurnInfo, retrieved: list[RetrievedMemory],
                    packet: SurprisalPacket, ctx: PCMContext, llm: LLMClient | None
                    ) -> tuple[str, list[MemoryChange]]:
    draft = draft_hypothesis(info, retrieved, llm)
    weight = hypothesis_weight(packet.s_eff, packet.theta_low, packet.theta_high,
                               ctx.hypothesis_min_weight, ctx.hypothesis_max_weight)
    with graph.lock:
        observation, observed = write_memory(graph, info, info.content, NodeType.FACT, ctx.observation_weight,
                                             agent=AGENT, reason="novel observation")
        hypothesis, hypothesised = write_memory(
            graph, info, draft.hypothesis, NodeType.HYPOTHESIS, weight, agent=AGENT,
            keywords=[k.lower() for k in draft.evidence_keywords], reason=f"hypothesis: {draft.monologue[:160]}")
        graph.add_edge(MemoryEdge(source=hypothesis.id, target=observation.id, relation="derived_from",
                                  weight=weight, timestamp=info.timestamp))
        closest = closest_memory(retrieved)
        if closest is not None:
            graph.add_edge(MemoryEdge(source=hypothesis.id, target=closest.id, relation="derived_from",
                                      weight=weight, timestamp=info.timestamp))
        return observation.id, [observed, hypothesised]
