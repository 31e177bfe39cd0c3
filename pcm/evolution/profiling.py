"""Profiling (medium surprise): keep the novel observation and write a HYPOTHESIS about the user.

w_init = σ(S_eff) mapped into [0.3, 0.5]; `derived_from` edges to the observation and
the closest memory. Offline, the hypothesis states what the input suggests: an interest
in, or a new direction towards, its informative new words ("Possibly taking up
pottery, wheel (Personal)"), which are also its evidence keywords: a later turn that uses
them confirms it (implicit verification, see maintenance). A turn with no such word ("Later!",
"好，试试这个。") gets no hypothesis: nothing could ever confirm it, so it would only clutter the
graph until it decayed. Evidence keywords are
informative words only (`informative_keywords`): rare in the user's memory and rare in
general use, so "lately" or "learning" confirm nothing. With an LLM the hypothesis comes
from an internal monologue. Like maintenance, it also confirms what the turn supports (all but the
facts it contests): a new turn on a known subject is still a sign that the subject's memories hold.
"""

from __future__ import annotations

from collections.abc import Callable

from pcm.config import PCMContext
from pcm.evolution import TurnInfo, closest_memory, informative_keywords, write_memory
from pcm.evolution.maintenance import decay_hypotheses, judged_support, link_support, reinforce
from pcm.formulas import hypothesis_weight
from pcm.llm import HypothesisDraft, LLMClient
from pcm.llm.replies import MAX_KEYWORD_CHARS
from pcm.models import MemoryChange, MemoryEdge, NodeType, RetrievedMemory, SurprisalPacket
from pcm.prompts import HYPOTHESIS_SYSTEM, relation_prompt
from pcm.speech_acts import is_request
from pcm.world.knowledge_graph import WeightedKnowledgeGraph
from pcm.world.text import content_words, extract_entities

AGENT = "profiling"


def draft_hypothesis(
    graph: WeightedKnowledgeGraph, info: TurnInfo, retrieved: list[RetrievedMemory], llm: LLMClient | None
) -> HypothesisDraft | None:
    """The hypothesis the turn suggests, or None offline when it has no informative new word."""
    closest = closest_memory(retrieved)
    if llm is not None:
        draft = llm.structured(HypothesisDraft, HYPOTHESIS_SYSTEM, relation_prompt(info.text, retrieved))
        if draft is not None and draft.hypothesis.strip():
            return draft
    known = {w.lower() for w in content_words(closest.content)} if closest else set()
    new_words = [
        w
        for w in dict.fromkeys(w.lower() for w in extract_entities(info.text) + content_words(info.text))
        if w not in known
    ]
    # a word longer than a keyword may be ("java.lang.NullPointerException…") names nothing a keyword can hold
    keywords = [w for w in informative_keywords(graph, new_words) if len(w) <= MAX_KEYWORD_CHARS][:6]
    if not keywords:
        return None
    who = info.speaker or "the user"
    topic = ", ".join(keywords[:4])
    domain = f" ({info.domain})" if info.domain else ""
    return HypothesisDraft(
        monologue="offline: novel input that contradicts nothing retrieved",
        hypothesis=f"Possibly {who} is taking up or turning towards: {topic}{domain}",
        evidence_keywords=keywords,
    )


def contested_facts(graph: WeightedKnowledgeGraph, packet: SurprisalPacket, ctx: PCMContext) -> list[tuple[str, float]]:
    """(fact id, P(contradiction)) of the judged facts this turn may revise: the relation model
    gives P(contradiction) ≥ `contest_threshold` and at least P(consistent), but the router did not
    call the turn a correction. Such a turn contests them: they keep their weight (a still-true
    fact is not retired on a doubt), and search shows the newer statement first until the fact is
    confirmed again (`pcm.world.retrieval`). A stored question or request (`is_request`) is never
    contested, as `find_conflicts` never supersedes one: it claimed nothing."""
    if ctx.contest_threshold is None:
        return []
    return [
        (node_id, verdict["contradiction"])
        for node_id, verdict in packet.relations.items()
        if verdict["contradiction"] >= max(ctx.contest_threshold, verdict["consistent"])
        and node_id in graph
        and graph.attrs(node_id)["type"] == NodeType.FACT.value
        and not is_request(graph.attrs(node_id)["content"])
    ]


def _link(
    graph: WeightedKnowledgeGraph, source: str, target: str, relation: str, weight: float, info: TurnInfo
) -> None:
    graph.add_edge(MemoryEdge(source=source, target=target, relation=relation, weight=weight, timestamp=info.timestamp))


def _write_hypothesis(
    graph: WeightedKnowledgeGraph,
    info: TurnInfo,
    draft: HypothesisDraft,
    weight: float,
    observation_id: str,
    retrieved: list[RetrievedMemory],
    ctx: PCMContext,
) -> tuple[str, MemoryChange]:
    """Writes `draft` as a hypothesis `derived_from` the turn's observation and the closest memory."""
    hypothesis, hypothesised = write_memory(
        graph,
        info,
        draft.hypothesis,
        NodeType.HYPOTHESIS,
        weight,
        ctx,
        agent=AGENT,
        keywords=[k.lower() for k in draft.evidence_keywords],
        reason=f"hypothesis: {draft.monologue[:160]}",
    )
    _link(graph, hypothesis.id, observation_id, "derived_from", weight, info)
    closest = closest_memory(retrieved)
    if closest is not None:
        _link(graph, hypothesis.id, closest.id, "derived_from", weight, info)
    return hypothesis.id, hypothesised


def apply_profiling(
    graph: WeightedKnowledgeGraph,
    info: TurnInfo,
    retrieved: list[RetrievedMemory],
    packet: SurprisalPacket,
    ctx: PCMContext,
    llm: LLMClient | None,
    judge: Callable[[list[RetrievedMemory]], dict] | None = None,
) -> tuple[str, list[MemoryChange]]:
    """Stores the turn, writes its hypothesis, and confirms what it supports as maintenance does
    (`judge` gives P(consistent) of supported facts): a novel turn on a known subject still confirms
    the memories of that subject, all but those it contests."""
    draft = draft_hypothesis(graph, info, retrieved, llm)
    weight = hypothesis_weight(
        packet.s_eff, packet.theta_low, packet.theta_high, ctx.hypothesis_min_weight, ctx.hypothesis_max_weight
    )
    with graph.lock:
        contested = contested_facts(graph, packet, ctx)
        supported, relations = judged_support(graph, info, retrieved, ctx, judge, frozenset(i for i, _ in contested))
        observation, observed = write_memory(
            graph,
            info,
            info.content,
            NodeType.FACT,
            ctx.observation_weight,
            ctx,
            agent=AGENT,
            reason="novel observation",
        )
        changes, written = [observed, *reinforce(graph, info, supported, ctx, relations)], []
        link_support(graph, info, observation.id, supported, [], ctx)
        if draft is not None:
            hypothesis_id, hypothesised = _write_hypothesis(graph, info, draft, weight, observation.id, retrieved, ctx)
            changes.append(hypothesised)
            written.append(hypothesis_id)
        for fact_id, p_contradiction in contested:
            _link(graph, observation.id, fact_id, "contests", p_contradiction, info)
        return observation.id, [*changes, *decay_hypotheses(graph, info, written + supported, ctx)]
