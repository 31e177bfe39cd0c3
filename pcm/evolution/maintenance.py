"""Maintenance (low surprise): reinforce what the input supports, promote confirmed hypotheses,
and let unconfirmed hypotheses fade with time.

Supported memories are the retrieved ones of the same speaker about the same subject (sharing
an informative word), plus hypotheses whose evidence keywords the input uses (implicit
verification: the user's own later words confirm a hypothesis; nobody has to ask). Keywords
common in general use ("lately", "learning") confirm nothing, even in hypotheses written
before that rule. Hypotheses time-decay on every turn (`decay_hypotheses`, called by each
branch); the confirmed ones, whose weight rose this turn, are spared.
"""

from __future__ import annotations

from pcm.config import PCMContext
from pcm.evolution import TurnInfo, is_common_word, related_memories, write_memory
from pcm.formulas import reinforce_weight, time_decay_weight
from pcm.models import MemoryChange, MemoryEdge, NodeType, RetrievedMemory
from pcm.world.knowledge_graph import WeightedKnowledgeGraph
from pcm.world.text import content_words

AGENT = "maintenance"
SECONDS_PER_DAY = 86400.0


def supported_memories(graph: WeightedKnowledgeGraph, info: TurnInfo, retrieved: list[RetrievedMemory],
                       ctx: PCMContext) -> list[str]:
    """The memories this turn confirms: related retrieved memories of the same speaker that share an
    informative word with it (similar small talk confirms nothing: without this, every "that's great!"
    would be reinforced by the next one), and hypotheses whose evidence keywords it uses."""
    words = set(content_words(info.text))
    informative = graph.informative_words(words)
    supported = [m.id for m in related_memories(retrieved, ctx)
                 if m.speaker == info.speaker and informative & set(content_words(m.content))]
    words |= {w.lower() for w in info.text.split()}
    for node in graph.nodes(types=[NodeType.HYPOTHESIS], include_dormant=False):
        if node.id not in supported and words & {k for k in node.keywords if not is_common_word(k)}:
            supported.append(node.id)
    return supported


def reinforce(graph: WeightedKnowledgeGraph, info: TurnInfo, supported: list[str], ctx: PCMContext
              ) -> list[MemoryChange]:
    """w ← w + η(1 − w) for each supported memory; a HYPOTHESIS above the threshold becomes a FACT."""
    changes = []
    with graph.lock:
        for node_id in supported:
            node = graph.node(node_id)
            new = reinforce_weight(node.weight, ctx.eta)
            promote = node.type == NodeType.HYPOTHESIS and new > ctx.promotion_threshold
            changes.append(graph.update_node(
                node_id, weight=new, type=NodeType.FACT if promote else None, now=info.timestamp, agent=AGENT,
                turn=info.turn, thread_id=info.thread_id,
                reason=("confirmed hypothesis promoted to fact" if promote else "supported by turn")
                + f" {info.turn}: {info.text[:120]}"))
    return changes


def decay_hypotheses(graph: WeightedKnowledgeGraph, info: TurnInfo, confirmed: list[str], ctx: PCMContext
                     ) -> list[MemoryChange]:
    """w ← w·exp(−γ·Δt) for every hypothesis not in `confirmed` (those whose weight rose this turn),
    Δt in days since its last decay. Called on every turn, whichever branch it took."""
    changes = []
    with graph.lock:
        for node in graph.nodes(types=[NodeType.HYPOTHESIS], include_dormant=False):
            if node.id in confirmed:
                continue
            since = max(node.decayed_at or node.updated_at, node.updated_at)
            days = (info.timestamp - since).total_seconds() / SECONDS_PER_DAY
            new = time_decay_weight(node.weight, ctx.gamma, days)
            if node.weight - new > 1e-4:
                changes.append(graph.update_node(
                    node.id, weight=new, now=info.timestamp, decayed=True, agent=AGENT, turn=info.turn,
                    thread_id=info.thread_id, reason=f"unconfirmed for {days:.1f} days"))
    return changes


def apply_maintenance(graph: WeightedKnowledgeGraph, info: TurnInfo, retrieved: list[RetrievedMemory],
                      ctx: PCMContext) -> tuple[str, list[MemoryChange]]:
    with graph.lock:
        supported = supported_memories(graph, info, retrieved, ctx)
        changes = reinforce(graph, info, supported, ctx)
        observation, observed = write_memory(graph, info, info.content, NodeType.FACT, ctx.observation_weight,
                                             agent=AGENT, reason="observation consistent with memory")
        for node_id in supported:
            graph.add_edge(MemoryEdge(source=observation.id, target=node_id, relation="supports",
                                      weight=ctx.observation_weight, timestamp=info.timestamp))
        changes = [observed, *changes, *decay_hypotheses(graph, info, supported, ctx)]
        return observation.id, changes
