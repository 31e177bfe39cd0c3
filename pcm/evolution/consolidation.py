"""Consolidation of turns evicted from working memory into long-term memory.

Each evicted turn is an episodic FACT (text, speaker, time) — user turns already got
theirs when they were processed — linked by `mentions` edges to ENTITY nodes for the
names it contains (`pcm.world.names.named_entities`: people, pets, places, organisations,
products, events, titles), so retrieval can expand through shared entities. With an LLM, atomic
facts are extracted too, each `derived_from` its episodic turn: in one call per batch of
`llm_fact_batch` consolidated turns (`extract_facts`), which keeps the LLM's cost per
ingested turn low.
"""

from __future__ import annotations

from pcm.config import PCMContext
from pcm.evolution import TurnInfo, write_memory
from pcm.formulas import reinforce_weight
from pcm.llm import ExtractedFacts, LLMClient
from pcm.models import MemoryChange, MemoryEdge, MemoryNode, NodeType, as_utc
from pcm.prompts import FACT_SYSTEM, turns_prompt
from pcm.world.knowledge_graph import WeightedKnowledgeGraph
from pcm.world.names import KnownName, known_names, named_entities

AGENT = "consolidation"


def _turn_info(turn: dict, thread_id: str | None) -> TurnInfo:
    return TurnInfo(
        text=turn["content"],
        turn=turn.get("turn", 0),
        thread_id=thread_id,
        timestamp=as_utc(turn.get("timestamp")),
        domain=turn.get("domain"),
        speaker=turn.get("speaker"),
        dialog_ids=list(turn.get("dialog_ids") or []),
        domains=turn.get("domains"),
        context=turn.get("context"),
    )


def link_entities(
    graph: WeightedKnowledgeGraph, node: MemoryNode, info: TurnInfo, ctx: PCMContext
) -> list[MemoryChange]:
    """Create or reinforce an ENTITY per name in the memory (`named_entities`), and link it with `mentions`."""
    changes = []
    for name in named_entities(info.text, _known_name(graph, info)):
        entity_id = graph.entity_id(name)
        if entity_id in graph:
            entity = graph.node(entity_id)
            changes.append(
                graph.update_node(
                    entity_id,
                    weight=reinforce_weight(entity.weight, ctx.eta),
                    now=info.timestamp,
                    agent=AGENT,
                    turn=info.turn,
                    thread_id=info.thread_id,
                    reason=f"mentioned again: {node.id}",
                )
            )
        else:
            entity = MemoryNode(
                id=entity_id,
                content=name,
                type=NodeType.ENTITY,
                domain=info.domain,
                domain_distribution=info.domains,
                weight=ctx.observation_weight,
                created_at=info.timestamp,
                updated_at=info.timestamp,
                last_accessed=info.timestamp,
                source=info.source(),
            )
            changes.append(
                graph.add_node(
                    entity, reason="entity first mentioned", agent=AGENT, turn=info.turn, thread_id=info.thread_id
                )
            )
        graph.add_edge(
            MemoryEdge(
                source=node.id,
                target=entity_id,
                relation="mentions",
                weight=ctx.observation_weight,
                timestamp=info.timestamp,
            )
        )
    return changes


def _known_name(graph: WeightedKnowledgeGraph, info: TurnInfo) -> KnownName:
    """A name is known when it is a speaker's (or a speaker's first name) or already an entity of the memory."""
    speakers = known_names([*graph.speakers(), info.speaker or ""])
    return lambda name: speakers(name) or graph.entity_id(name) in graph


def consolidate_turns(
    graph: WeightedKnowledgeGraph, turns: list[dict], thread_id: str | None, ctx: PCMContext
) -> tuple[list[MemoryChange], list[dict]]:
    """The changes, and the turns with the id of their episodic memory (`node_id`), for `extract_facts`."""
    changes: list[MemoryChange] = []
    consolidated = []
    with graph.lock:
        for turn in turns:
            info = _turn_info(turn, thread_id)
            node_id = turn.get("node_id")
            if node_id and node_id in graph:
                node = graph.node(node_id)
            else:
                node, created = write_memory(
                    graph,
                    info,
                    info.content,
                    NodeType.FACT,
                    ctx.observation_weight,
                    ctx,
                    agent=AGENT,
                    reason=f"episodic memory of an evicted {turn['role']} turn",
                )
                changes.append(created)
            changes.extend(link_entities(graph, node, info, ctx))
            consolidated.append({**turn, "node_id": node.id})
    return changes, consolidated


def extract_facts(
    graph: WeightedKnowledgeGraph, turns: list[dict], thread_id: str | None, ctx: PCMContext, llm: LLMClient
) -> list[MemoryChange]:
    """Atomic facts of consolidated `turns` in one LLM call, each `derived_from` its turn's memory.
    A reply that fails validation adds nothing; a fact naming a turn outside the batch is skipped."""
    extracted = llm.structured(ExtractedFacts, FACT_SYSTEM, turns_prompt(turns))
    changes: list[MemoryChange] = []
    with graph.lock:
        for item in extracted.facts if extracted else []:
            if not 1 <= item.turn <= len(turns) or turns[item.turn - 1].get("node_id") not in graph:
                continue
            turn = turns[item.turn - 1]
            info = _turn_info(turn, thread_id)
            atom, created = write_memory(
                graph,
                info,
                item.fact,
                NodeType.FACT,
                ctx.observation_weight,
                ctx,
                agent=AGENT,
                reason="atomic fact extracted by the LLM",
            )
            graph.add_edge(
                MemoryEdge(
                    source=atom.id,
                    target=turn["node_id"],
                    relation="derived_from",
                    weight=ctx.observation_weight,
                    timestamp=info.timestamp,
                )
            )
            changes.append(created)
    return changes
