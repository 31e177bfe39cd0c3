"""Maintenance (low surprise): reinforce what the input supports, promote confirmed hypotheses,
and let unconfirmed hypotheses fade with time.

Supported memories are the retrieved ones of the same speaker about the same subject (sharing
an informative word), plus hypotheses whose evidence keywords the input uses (implicit
verification: the user's own later words confirm a hypothesis; nobody has to ask). A supported
fact rises by how sure the relation model is that the input confirms it (a later turn on the
same subject is not always a confirmation), a hypothesis by its keywords' full step. Keywords
common in general use ("lately", "learning") confirm nothing, even in hypotheses written
before that rule. Hypotheses time-decay on every turn (`decay_hypotheses`, called by each
branch); the confirmed ones, whose weight rose this turn, are spared. A superseded memory that the
input confirms surely enough (`reaffirm_threshold`) is reaffirmed: the supersession was wrong or
has been reversed, so the memory gets its weight back and search stops ranking it under its
successor (`pcm.world.supersession`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta

from pcm.config import PCMContext
from pcm.evolution import TurnInfo, is_common_word, related_memories, write_memory
from pcm.formulas import reaffirmed_weight, reinforce_weight, time_decay_weight
from pcm.models import MemoryChange, MemoryEdge, NodeType, RetrievedMemory, utcnow
from pcm.speech_acts import is_request
from pcm.world.knowledge_graph import WeightedKnowledgeGraph
from pcm.world.supersession import REAFFIRMED, REAFFIRMS, standing_supersessions, weight_before_supersession
from pcm.world.text import content_words

AGENT = "maintenance"
SECONDS_PER_DAY = 86400.0


def supported_memories(
    graph: WeightedKnowledgeGraph, info: TurnInfo, retrieved: list[RetrievedMemory], ctx: PCMContext
) -> list[str]:
    """The memories this turn confirms: related retrieved memories of the same speaker that share an
    informative word with it (similar small talk confirms nothing: without this, every "that's great!"
    would be reinforced by the next one), and hypotheses whose evidence keywords it uses."""
    words = set(content_words(info.text))
    informative = graph.informative_words(words)
    supported = [
        m.id
        for m in related_memories(retrieved, ctx)
        if m.speaker == info.speaker and informative & set(content_words(m.content))
    ]
    words |= {w.lower() for w in info.text.split()}
    for node in graph.nodes(types=[NodeType.HYPOTHESIS], include_dormant=False):
        if node.id not in supported and words & {k for k in node.keywords if not is_common_word(k)}:
            supported.append(node.id)
    return supported


def reinforce(
    graph: WeightedKnowledgeGraph,
    info: TurnInfo,
    supported: list[str],
    ctx: PCMContext,
    relations: Mapping[str, Mapping[str, float]] | None = None,
) -> list[MemoryChange]:
    """w ← w + η·p·(1 − w) for each supported memory, p the relation model's P(consistent) in `relations` (1 when
    not judged: a hypothesis confirmed by its evidence keywords); a HYPOTHESIS above the threshold
    becomes a FACT."""
    changes = []
    relations = relations or {}
    with graph.lock:
        for node_id in supported:
            node = graph.node(node_id)
            certainty = relations[node_id]["consistent"] if node_id in relations else 1.0
            new = reinforce_weight(node.weight, ctx.eta, certainty)
            promote = node.type == NodeType.HYPOTHESIS and new > ctx.promotion_threshold
            changes.append(
                graph.update_node(
                    node_id,
                    weight=new,
                    type=NodeType.FACT if promote else None,
                    now=info.timestamp,
                    agent=AGENT,
                    turn=info.turn,
                    thread_id=info.thread_id,
                    reason=("confirmed hypothesis promoted to fact" if promote else "supported by turn")
                    + f" {info.turn}: {info.text[:120]}",
                )
            )
    return changes


def reaffirm(
    graph: WeightedKnowledgeGraph,
    info: TurnInfo,
    supported: list[str],
    ctx: PCMContext,
    relations: Mapping[str, Mapping[str, float]] | None,
) -> tuple[list[str], list[MemoryChange]]:
    """The superseded memories among `supported` that this turn confirms with the head's P(consistent) of at
    least `reaffirm_threshold`, each given back its weight from before the correction
    (`reaffirmed_weight`); the caller links the turn's memory to them (`reaffirms`)."""
    if ctx.reaffirm_threshold is None or not relations:
        return [], []
    reaffirmed, changes = [], []
    with graph.lock:
        for node_id in supported:
            verdict = relations.get(node_id)
            if verdict is None or verdict["consistent"] < ctx.reaffirm_threshold:
                continue
            if not standing_supersessions(graph, node_id):
                continue
            node = graph.node(node_id)
            before = weight_before_supersession(graph, node_id)
            reaffirmed.append(node_id)
            changes.append(
                graph.update_node(
                    node_id,
                    weight=reaffirmed_weight(node.weight, before if before is not None else node.weight),
                    now=info.timestamp,
                    agent=AGENT,
                    turn=info.turn,
                    thread_id=info.thread_id,
                    reason=f"{REAFFIRMED} by turn {info.turn} (P(consistent)={float(verdict['consistent']):.2f}), "
                    f"supersession overturned: {info.text[:120]}",
                )
            )
    return reaffirmed, changes


def decay_hypotheses(
    graph: WeightedKnowledgeGraph, info: TurnInfo, confirmed: list[str], ctx: PCMContext
) -> list[MemoryChange]:
    """w ← w·exp(−γ·Δt) for every hypothesis not in `confirmed` (those whose weight rose this turn),
    Δt in days since its last decay, up to the turn's time or this machine's clock plus the allowed
    skew, whichever is earlier (a turn's time is checked against it on input; this holds for any
    caller). Called on every turn, whichever branch it took."""
    changes = []
    moment = min(info.timestamp, utcnow() + timedelta(hours=ctx.clock_skew_hours))
    with graph.lock:
        for node in graph.nodes(types=[NodeType.HYPOTHESIS], include_dormant=False):
            if node.id in confirmed:
                continue
            since = max(node.decayed_at or node.updated_at, node.updated_at)
            days = (moment - since).total_seconds() / SECONDS_PER_DAY
            new = time_decay_weight(node.weight, ctx.gamma, days)
            if node.weight - new > 1e-4:
                changes.append(
                    graph.update_node(
                        node.id,
                        weight=new,
                        now=moment,
                        decayed=True,
                        agent=AGENT,
                        turn=info.turn,
                        thread_id=info.thread_id,
                        reason=f"unconfirmed for {days:.1f} days",
                    )
                )
    return changes


def judged_support(
    graph: WeightedKnowledgeGraph,
    info: TurnInfo,
    retrieved: list[RetrievedMemory],
    ctx: PCMContext,
    judge: Callable[[list[RetrievedMemory]], dict] | None,
    exclude: frozenset[str] = frozenset(),
) -> tuple[list[str], dict | None]:
    """The memories this turn confirms (`supported_memories`, less `exclude`) and `judge`'s verdicts
    on those of them that are facts (None when there are none)."""
    supported = [i for i in supported_memories(graph, info, retrieved, ctx) if i not in exclude]
    by_id = {m.id: m for m in retrieved}
    judged = [by_id[i] for i in supported if i in by_id and by_id[i].type == NodeType.FACT]
    return supported, (judge(judged) if judge and judged else None)


def link_support(
    graph: WeightedKnowledgeGraph,
    info: TurnInfo,
    observation_id: str,
    supported: list[str],
    reaffirmed: list[str],
    ctx: PCMContext,
) -> None:
    """Links the turn's observation to each memory it confirms (`supports`, or `reaffirms`)."""
    for node_id in supported:
        graph.add_edge(
            MemoryEdge(
                source=observation_id,
                target=node_id,
                relation=REAFFIRMS if node_id in reaffirmed else "supports",
                weight=ctx.observation_weight,
                timestamp=info.timestamp,
            )
        )


def apply_maintenance(
    graph: WeightedKnowledgeGraph,
    info: TurnInfo,
    retrieved: list[RetrievedMemory],
    ctx: PCMContext,
    judge: Callable[[list[RetrievedMemory]], dict] | None = None,
) -> tuple[str, list[MemoryChange]]:
    """Reinforce the supported memories, each by how sure `judge` (P(relation) of the input against
    given memories, by id) is that the input confirms it, reaffirming superseded ones (`reaffirm`);
    store the input as an observation, at `request_weight` when it only asks something of the
    assistant (it claims nothing about the user, yet its question form makes a question-shaped
    query find it)."""
    with graph.lock:
        supported, relations = judged_support(graph, info, retrieved, ctx, judge)
        reaffirmed, changes = reaffirm(graph, info, supported, ctx, relations)
        changes += reinforce(graph, info, supported, ctx, relations)
        weight, reason = (
            (ctx.request_weight, "question or request to the assistant")
            if is_request(info.text)
            else (ctx.observation_weight, "observation consistent with memory")
        )
        observation, observed = write_memory(
            graph, info, info.content, NodeType.FACT, weight, ctx, agent=AGENT, reason=reason
        )
        link_support(graph, info, observation.id, supported, reaffirmed, ctx)
        changes = [observed, *changes, *decay_hypotheses(graph, info, supported, ctx)]
        return observation.id, changes
