"""Correction (high surprise): decay the contradicted memories, write the new FACT, link `supersedes`."""

from __future__ import annotations

from pcm.config import PCMContext
from pcm.evolution import TurnInfo, related_memories, write_memory
from pcm.evolution.maintenance import decay_hypotheses
from pcm.formulas import decay_weight
from pcm.llm import RelationJudgement
from pcm.models import MemoryChange, MemoryEdge, NodeType, RetrievedMemory, SurprisalPacket
from pcm.speech_acts import is_request
from pcm.world.knowledge_graph import WeightedKnowledgeGraph
from pcm.world.supersession import SUPERSEDES

AGENT = "correction"
CONFLICT_RELATIVE_SIMILARITY = 0.9
CONFLICT_MIN_SIMILARITY = 0.1


def find_conflicts(
    retrieved: list[RetrievedMemory],
    ctx: PCMContext,
    judgement: RelationJudgement | None = None,
    speaker: str | None = None,
    relations: dict[str, dict[str, float]] | None = None,
    tau_contradiction: float = 0.5,
) -> list[RetrievedMemory]:
    """The memories the input contradicts.

    With an LLM judgement: the retrieved memories it names. Else, with the relation model's
    verdicts (`relations`, P(relation) per judged memory id): exactly the memories whose
    P(contradiction) reaches `tau_contradiction`; if none does (another signal called the turn a
    contradiction, the relation model did not), only the judged memory likeliest contradicted:
    one suspect, not every memory similar to the input (in a long history those are chat, and
    retiring them retires what is still true). With no verdicts:
    the best-matching retrieved fact (the turn was already
    judged a contradiction, so its closest fact is the prime suspect, unless it is
    plainly unrelated, below CONFLICT_MIN_SIMILARITY), plus other facts about the same
    subject within a tight band around it (decaying costs more than reinforcing).
    Hypotheses are left to time decay: a change of direction often confirms the
    hypothesis that anticipated it. In a conversation with several speakers, only the
    same speaker's facts can be superseded: one person cannot revise another's facts. A stored
    question or request (`is_request`) is never a conflict: it claimed nothing, and a verdict
    against it does not pass to the next suspect.
    """

    def claims(memories: list[RetrievedMemory]) -> list[RetrievedMemory]:
        return [m for m in memories if not is_request(m.content)]

    if judgement is not None and judgement.conflicting_ids:
        named = [m for m in retrieved if m.id in set(judgement.conflicting_ids)]
        if named:
            return claims(named)
    if relations:
        judged = {m.id: m for m in retrieved if m.id in relations}
        contradicted = sorted(
            (i for i in judged if relations[i]["contradiction"] >= tau_contradiction),
            key=lambda i: -relations[i]["contradiction"],
        )
        if contradicted:
            return claims([judged[i] for i in contradicted])[: ctx.max_related]
        suspects = claims(list(judged.values()))
        if suspects:
            return [max(suspects, key=lambda m: relations[m.id]["contradiction"])]
    facts = claims([m for m in retrieved if m.via == "search" and m.type == NodeType.FACT and m.speaker == speaker])
    if not facts:
        return []
    best = max(facts, key=lambda m: m.similarity)
    if best.similarity < CONFLICT_MIN_SIMILARITY:
        return []
    related = related_memories(facts, ctx, relative=CONFLICT_RELATIVE_SIMILARITY)
    return [best, *[m for m in related if m.id != best.id]][: ctx.max_related]


def decay_strength(packet: SurprisalPacket) -> float:
    """S_eff used in w·exp(−β·S_eff): the measured S_eff, at least θ_high.

    A turn routed here by the calibrated router or the LLM is a contradiction even when
    its S_eff lies below θ_high; it is decayed as strongly as a threshold-routed one.
    """
    return max(packet.s_eff, packet.theta_high)


def apply_correction(
    graph: WeightedKnowledgeGraph,
    info: TurnInfo,
    conflicts: list[RetrievedMemory],
    packet: SurprisalPacket,
    ctx: PCMContext,
    note: str | None = None,
) -> tuple[str, list[MemoryChange]]:
    """Decay each conflicting memory, write the input as a FACT (w = correction_weight), link supersedes.

    With nothing to correct, the input is kept as a plain observation (w = observation_weight).
    Unconfirmed hypotheses time-decay on this turn as on every other.
    """
    with graph.lock:
        changes = []
        strength = decay_strength(packet)
        beta = ctx.beta
        for memory in conflicts:
            old = graph.node(memory.id).weight
            changes.append(
                graph.update_node(
                    memory.id,
                    weight=decay_weight(old, beta, strength),
                    now=info.timestamp,
                    agent=AGENT,
                    turn=info.turn,
                    thread_id=info.thread_id,
                    reason=f"contradicted by turn {info.turn} (S_eff={packet.s_eff:.3f}): {info.text[:120]}"
                    + (f" — reason: {note}" if note else ""),
                )
            )
        weight = ctx.correction_weight if conflicts else ctx.observation_weight
        superseded = f"{len(conflicts)} {'memory' if len(conflicts) == 1 else 'memories'}"
        reason = f"new fact superseding {superseded}" if conflicts else "no contradicted memory found"
        node, created = write_memory(graph, info, info.content, NodeType.FACT, weight, ctx, agent=AGENT, reason=reason)
        changes.insert(0, created)
        for memory in conflicts:
            graph.add_edge(
                MemoryEdge(
                    source=node.id,
                    target=memory.id,
                    relation=SUPERSEDES,
                    weight=ctx.correction_weight,
                    timestamp=info.timestamp,
                )
            )
        return node.id, [*changes, *decay_hypotheses(graph, info, [], ctx)]
