"""The pieces of one story: after scoring, a candidate rises with a strong match it belongs with.

Three links raise scores (`pcm.world.retrieval` applies them to a query's candidates, not to the turn's
own retrieval): the same day (a memory said on the day of a strong match, through their day node along
`said_on` edges, `same_day_score`), nearby turns (a memory said a few turns from a stronger match in the
same thread, by its source's thread and turn: the reply to it, the next part of its story,
`nearby_turn_score`) and a shared entity (a memory naming a person, pet or place that a stronger match
names, through the entity along `mentions` edges, `shared_entity_score`). Together they are story
expansion: the `no expansion` ablation turns them off. A fourth link orders: a question put to the
speaker a query asks about yields to that speaker's answer (`answers_first`).
"""

from __future__ import annotations

from pcm.config import PCMContext
from pcm.formulas import nearby_turn_score, same_day_evidence, same_day_score, shared_entity_score
from pcm.speech_acts import ends_asking
from pcm.world.knowledge_graph import WeightedKnowledgeGraph

Scored = list[tuple[str, float, float, float]]  # (id, sim, P(d|I), score)


def story_scores(
    graph: WeightedKnowledgeGraph, scored: Scored, ctx: PCMContext, same_sitting: bool, shared_entities: bool
) -> Scored:
    """The candidates' scores raised by the same day (`day_weight`) and pulled toward nearby turns
    (`nearby_weight`), when `same_sitting`, then pulled along shared entities (`entity_weight`, when
    `shared_entities`); a weight of 0 turns its link off."""
    if same_sitting and ctx.day_weight > 0:
        scored = same_day_scores(graph, scored, ctx.day_weight)
    if same_sitting and ctx.nearby_weight > 0 and ctx.nearby_turns > 0:
        scored = nearby_turn_scores(graph, scored, ctx.nearby_weight, ctx.nearby_turns)
    if shared_entities and ctx.entity_weight > 0:
        scored = shared_entity_scores(graph, scored, ctx.entity_weight)
    return scored


def same_day_scores(graph: WeightedKnowledgeGraph, scored: Scored, strength: float) -> Scored:
    """Each (id, sim, P(d|I), score) with its score raised by how strong the best hit of its day is
    (`same_day_score`): the other pieces of a story told in one sitting come up with its best
    match. A memory's day is the day node it is linked to (`said_on`, the UTC date it was said on);
    a memory with none gains nothing."""
    days = {}
    for node_id, *_ in scored:
        linked = graph.out_edges(node_id, "said_on")
        days[node_id] = linked[0][0] if linked else None
    day_best: dict = {}
    for node_id, _, _, score in scored:
        if days[node_id] is not None:
            day_best[days[node_id]] = max(day_best.get(days[node_id], 0.0), score)
    best = max((hit[3] for hit in scored), default=0.0)
    return [
        (node_id, similarity, relevance, score)
        if days[node_id] is None
        else (
            node_id,
            similarity,
            relevance,
            same_day_score(score, same_day_evidence(day_best[days[node_id]], best), strength),
        )
        for node_id, similarity, relevance, score in scored
    ]


def nearby_turn_scores(graph: WeightedKnowledgeGraph, scored: Scored, strength: float, reach: int) -> Scored:
    """Each (id, sim, P(d|I), score) pulled toward the strongest candidate said up to `reach` turns from
    it in the same thread (`nearby_turn_score`, by the turn and thread of each memory's source): a
    short reply ("The Minnesota Wolves!") shares few words with a query about what the turn before it
    asked, and the next part of a story told over a few turns shares few with a query about its
    start. A memory with no thread or turn is neither pulled nor pulls."""
    placed: dict[str, tuple[str, int]] = {}
    strongest: dict[tuple[str, int], float] = {}
    for node_id, _, _, score in scored:
        source = graph.attrs(node_id)["source"]
        if source.get("thread_id") is not None and source.get("turn") is not None:
            placed[node_id] = (source["thread_id"], int(source["turn"]))
            strongest[placed[node_id]] = max(strongest.get(placed[node_id], 0.0), score)
    pulled = []
    for node_id, similarity, relevance, score in scored:
        best = score
        if node_id in placed:
            thread, turn = placed[node_id]
            for other in range(turn - reach, turn + reach + 1):
                if (thread, other) in strongest:
                    pulled_to = nearby_turn_score(score, strongest[thread, other], abs(other - turn), strength)
                    best = max(best, pulled_to)
        pulled.append((node_id, similarity, relevance, best))
    return pulled


def shared_entity_scores(graph: WeightedKnowledgeGraph, scored: Scored, strength: float) -> Scored:
    """Each (id, sim, P(d|I), score) pulled toward the strongest other hit that names one of its
    entities (`shared_entity_score`): one hop along `mentions` edges through the entity, inside the
    ranking, never past the hit it follows. The speakers are not such links (they name everything)."""
    speakers = {name.lower() for name in graph.speakers()}
    named: dict[str, list[str]] = {}
    by_entity: dict[str, list[tuple[float, str]]] = {}
    for node_id, _, _, score in scored:
        named[node_id] = [
            entity
            for entity, _ in graph.out_edges(node_id, "mentions")
            if str(graph.attrs(entity)["content"]).lower() not in speakers
        ]
        for entity in named[node_id]:
            by_entity.setdefault(entity, []).append((score, node_id))
    memories = graph.retrievable_count()
    mentions = {entity: len(graph.in_edges(entity, "mentions")) for entity in by_entity}
    pulled = []
    for node_id, similarity, relevance, score in scored:
        best = score
        for entity in named[node_id]:
            source = max((s for s, other in by_entity[entity] if other != node_id), default=0.0)
            best = max(best, shared_entity_score(score, source, mentions[entity], memories, strength))
        pulled.append((node_id, similarity, relevance, best))
    return pulled


def answers_first(graph: WeightedKnowledgeGraph, hits: list, subject: str | None) -> list:
    """`hits` with each question put to `subject` (a hit of another speaker that ends asking,
    `ends_asking`) placed right after `subject`'s answer to it, when the answer is a later hit: a
    query about what Melanie said ("How did Melanie's children handle the accident?") is answered
    by her reply, not by the question that drew it ("How did they handle the accident?"), which
    shares the query's words. An answer is the turn whose context (`pcm.world.representation`)
    ends with the question. Nothing else moves; with no subject (`speaker_asked_about`), nothing does."""
    if subject is None:
        return hits
    ordered = list(hits)
    moved: set[str] = set()
    position = 0
    while position < len(ordered):
        question = ordered[position]
        if question.speaker != subject and question.id not in moved and ends_asking(question.content):
            asked = question.content.rstrip()
            for later in range(position + 1, len(ordered)):
                answer = ordered[later]
                context = graph.attrs(answer.id).get("context") or ""
                if answer.speaker == subject and context.rstrip().endswith(asked):
                    ordered.insert(position, ordered.pop(later))
                    moved.add(answer.id)
                    position += 1
                    break
        position += 1
    return ordered
