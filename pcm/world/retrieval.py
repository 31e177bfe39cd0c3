"""Intent-masked retrieval: Score = sim · P(d|I) · w, top-k above δ, then 1-hop expansion.

`sim`, what a memory is about, is estimated from these evidences:
- dense: the query's cosine with the memory's own dated text and with its text in context, mixed with
  `context_weight` (`pcm.world.representation`);
- lexical (the processing-flow document's optional keyword term): BM25 of the same two texts, each over the query's
  best match, mixed alike; sim = cos + κ·bm25·(1 − cos), κ = `lexical_weight`;
- the query's subject: a query that asks about one of the memory's speakers ("What did Caroline research?", "What
  did Tim suggest to John?": Tim) raises that speaker's memories, sim' = sim + ρ·(1 − sim), ρ = `speaker_weight`;
- time: a query that names a day or a month ("on 13 October, 2023", "in July") raises the memories from then (their
  session time or a day their text names, `pcm.world.dates`): sim' = sim + κ_t·e^(−d/τ)·(1 − sim), d the days
  outside that time (`pcm.formulas.time_match`).
- the answer type: a question asking for places, titles or a facet of the user's life raises the memories that answer
  it (the nearest naming a place or title join the candidates), sim' = sim + κ_a·(1 − sim) (`pcm.world.answer_types`).
P(d|I) is the spec's mask with ε grown as the mask's evidence weakens: ε' = 1 − (1 − ε)·c·ι', c the router's
confidence in the query's intent, ι how far this memory's neighbouring facts share domains beyond chance
(`domain_agreement`) and ι' its part above the floor ι₀ (`agreement_beyond`). With no shared words, no named
speaker, no named time and μ = 0, sim is the spec's cosine. Candidates come from the vector, the lexical and the
time index, so a memory that shares a rare name with the query, or was said on the day it asks about, is found
even when its embedding is far away. Last comes expansion, which follows the graph's edges inside the ranking
(`pcm.world.story`): a memory linked to the day node of a strong match (`said_on`) rises with it, Score' =
Score·(1 + β·s_day/s_max) (`pcm.formulas.same_day_score`, β = `day_weight`): the pieces of one story told in one
sitting; and a memory naming an entity (not a speaker) that a stronger match names (`mentions`) can be pulled
toward that match, never past it, Score' = Score + β_e·ι_e·(S_e − Score) (`shared_entity_score`, ι_e how few
memories name e; off by default, β_e = 0, since stems in the lexical evidence find what it pulled up); the other
1-hop neighbours of the top k come after it.

An English-only encoder cannot compare an English query with a Chinese memory (cosine ≈ 0 whatever they say), so
with `encoder_multilingual` off, `across_scripts` search also scores the latest memories written in the other script
with cosine taken as 0 (their lexical evidence still counts) and keeps them even below δ: their sim is unknown, not
low. They rank after every memory the encoder could compare, ordered by P(d|I)·w, so the current fact of a Chinese
conversation still outranks the one it superseded when an agent asks in English. Given the multilingual encoder
(`multilingual`), their cosine is its cosine instead. The evolution step does not use this: a memory of unknown
relevance is no evidence for routing or for what a turn confirms or contradicts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from itertools import islice

import numpy as np

from pcm.config import PCMContext
from pcm.formulas import (
    agreement_beyond,
    confidence_smoothing,
    distribution_confidence,
    intent_relevance,
    raise_similarity,
    retrieval_score,
    smooth_distribution,
)
from pcm.life_facets_pets import may_lose_a_pet
from pcm.life_states import holding_statements, life_states, states_clash, states_with_pets_named
from pcm.models import RETRIEVABLE_TYPES, NodeType, RetrievedMemory, as_utc
from pcm.speech_acts import is_request
from pcm.world.answer_types import answers_raised, asked_types, nearest_answering
from pcm.world.dates import asked_time, asks_when, time_evidence
from pcm.world.knowledge_graph import WeightedKnowledgeGraph
from pcm.world.representation import index_vectors
from pcm.world.story import answers_first, story_scores
from pcm.world.supersession import event_weights, standing_supersessions
from pcm.world.text import has_cjk, in_first_person, speaker_asked_about

#: the time index is searched this many tolerances τ around the time a query names (e^(−3) ≈ 0.05)
TIME_REACH = 3.0
#: how many of a user's latest facts a turn's life states are checked against (`life_state_clashes`):
#: reading a text's states takes about 1 ms, so a turn stays fast at 100,000 memories
LIFE_STATE_REACH = 2000


def _as_retrieved(
    graph: WeightedKnowledgeGraph, node_id: str, similarity: float, relevance: float, score: float, via: str
) -> RetrievedMemory:
    node = graph.node(node_id)
    return RetrievedMemory(
        id=node.id,
        content=node.content,
        type=node.type,
        domain=node.domain,
        weight=node.weight,
        similarity=similarity,
        intent_relevance=relevance,
        score=score,
        via=via,
        dialog_ids=node.source.dialog_ids,
        speaker=node.source.speaker,
        updated_at=node.updated_at,
    )


def retrieve(
    graph: WeightedKnowledgeGraph,
    query: str,
    query_vector: np.ndarray,
    ctx: PCMContext,
    intent: Mapping[str, float] | None = None,
    *,
    top_k: int | None = None,
    use_weights: bool = True,
    expand: bool = True,
    use_contests: bool = True,
    exclude: set[str] | None = None,
    across_scripts: bool = False,
    use_time: bool = True,
    multilingual=None,
    follow_entities: bool = True,
    use_answer_type: bool = True,
) -> list[RetrievedMemory]:
    """The top-k memories for `query`, best score first, then their expansions (`via` tells which is
    which), except that a superseded memory comes right after its successor (unless the query `asks_when`: then
    it is read at its weight before the correction, `event_weights`);
    empty memory gives an empty list. `across_scripts`: also the memories the encoder cannot compare with the
    query (module docstring), compared by the encoder `multilingual()` returns when it is given. Ablations: `use_time`
    off, without the time key; `use_answer_type` off, without the answer type; `expand` off, neither the
    story links (day and entity) nor the 1-hop neighbours (`follow_entities` off: no entity pull)."""
    top_k = top_k or ctx.top_k
    exclude = exclude or set()
    intent = _smoothed_intent(graph, intent, ctx)
    if len(graph) == 0:
        return []
    pool = max(4 * top_k, 40)
    window = asked_time(query) if use_time and ctx.time_weight > 0 else None
    asked = window.over_years(graph.years()) if window is not None else ()
    dense, lexical, uncomparable = _candidates(
        graph, query, query_vector, ctx, pool, across_scripts, asked, multilingual
    )
    kinds = asked_types(query) if use_answer_type and ctx.answer_type_weight > 0 else frozenset()
    dense.update(nearest_answering(graph, query_vector, kinds, dense, ctx.answer_type_candidates))
    subject = _subject(graph, query, ctx)
    when = asks_when(query)  # an event keeps its date after the state it began has ended: no decay, no reorder
    weights = (event_weights(graph, dense) if when else {}) if use_weights else None
    scored = _scored(graph, subject, (dense, lexical, uncomparable), intent, ctx, asked, weights, exclude)
    scored = answers_raised(graph, scored, kinds, ctx.answer_type_weight)
    scored = story_scores(graph, scored, ctx, same_sitting=expand, shared_entities=expand and follow_entities)
    hits = [_as_retrieved(graph, *hit, "search") for hit in sorted(scored, key=lambda hit: -hit[3])]
    restating = _restatements(graph, hits)
    hits = [h for h in hits if h.id not in restating]
    hits = (answers_first(graph, hits, subject) if expand else hits)[:top_k]
    if expand:
        # direct evidence keeps its places; what expansion adds comes after it
        hits = [*hits, *_expand(graph, hits, ctx, intent, use_weights, exclude)]
        hits = hits if when else _successors_first(graph, hits, ctx, intent, exclude, use_contests)
    return hits


def life_state_clashes(
    graph: WeightedKnowledgeGraph, text: str, speaker: str | None, ctx: PCMContext, reach: int = LIFE_STATE_REACH
) -> list[RetrievedMemory]:
    """The speaker's facts whose life state `text` excludes (`pcm.life_states.states_clash`): what a turn revises even
    when similarity cannot find it (said once, far back, in other words). What the speaker holds on a facet is what
    their latest fact about it says among the `reach` latest facts (not dormant), superseded or not, and every fact
    that has said so since it last changed clashes ("we rent in Pudong", then "I'll tell the landlord"). None when
    `text` asserts no life state or `life_states` is off."""
    if not ctx.life_states or not (life_states(text) or may_lose_a_pet(text)):
        return []
    with graph.lock:  # the latest facts, oldest first
        facts = list(islice(reversed(graph.model.by_type[NodeType.FACT.value]), reach))[::-1]
    awake = {i: a for i, a in ((i, graph.attrs(i)) for i in facts) if a["weight"] >= graph.dormant_floor}
    said = {i: a["content"] for i, a in awake.items() if a["source"].get("speaker") == speaker}
    said = {i: content for i, content in said.items() if not is_request(content)}
    stated = states_with_pets_named(text, said.values())
    clashing = [i for i in holding_statements(said, stated.keys()) if states_clash(stated, said[i])]
    return [_as_retrieved(graph, i, 0.0, 1.0, graph.attrs(i)["weight"], "life-state") for i in clashing]


def _subject(graph: WeightedKnowledgeGraph, query: str, ctx: PCMContext) -> str | None:
    """The one speaker `query` asks about (`speaker_asked_about`); None with `speaker_weight` 0."""
    return speaker_asked_about(query, graph.speakers()) if ctx.speaker_weight > 0 else None


def _scored(
    graph: WeightedKnowledgeGraph,
    subject: str | None,
    candidates: tuple[dict[str, float], dict[str, float], set[str]],
    intent: Mapping[str, float] | None,
    ctx: PCMContext,
    asked: tuple[tuple[datetime, datetime], ...],
    weights: Mapping[str, float] | None,
    exclude: set[str],
) -> list[tuple[str, float, float, float]]:
    """(id, sim, P(d|I), score) of each candidate above δ (and each one the encoder cannot compare):
    sim from the cosine raised by lexical, speaker (`subject`, the one speaker the query names) and
    time evidence (module docstring); w a memory's weight, or its weight in `weights` (None: 1)."""
    dense, lexical, uncomparable = candidates
    scored: list[tuple[str, float, float, float]] = []
    for node_id, cosine in dense.items():
        if node_id in exclude:
            continue
        attrs = graph.attrs(node_id)
        similarity = raise_similarity(cosine, lexical.get(node_id, 0.0), ctx.lexical_weight)
        if subject is not None:
            similarity = raise_similarity(
                similarity, float(attrs["source"].get("speaker") == subject), ctx.speaker_weight
            )
        if asked:
            evidence = time_evidence(asked, attrs, ctx.time_tolerance_days)
            similarity = raise_similarity(similarity, evidence, ctx.time_weight)
        relevance = intent_relevance(intent, attrs.get("domain"), attrs.get("domain_distribution"))
        weight = 1.0 if weights is None else weights.get(node_id, attrs["weight"])
        if node_id in uncomparable:
            similarity = max(similarity, ctx.min_score)
        score = retrieval_score(similarity, relevance, weight)
        if score > ctx.min_score or node_id in uncomparable:
            scored.append((node_id, similarity, relevance, score))
    return scored


def _smoothed_intent(
    graph: WeightedKnowledgeGraph, intent: Mapping[str, float] | None, ctx: PCMContext
) -> Mapping[str, float] | None:
    """P(d|I) smoothed towards uniform by ε, which shrinks with the intent's confidence and, with
    `agreement_smoothing`, with how little this user's consecutive facts share a domain."""
    if intent is None:
        return None
    epsilon = ctx.intent_smoothing
    if ctx.confidence_smoothing:
        confidence = distribution_confidence(intent)
        if ctx.agreement_smoothing:
            confidence *= agreement_beyond(graph.domain_agreement(), ctx.agreement_floor)
        epsilon = confidence_smoothing(epsilon, confidence)
    return smooth_distribution(intent, epsilon)


def _candidates(
    graph: WeightedKnowledgeGraph,
    query: str,
    query_vector: np.ndarray,
    ctx: PCMContext,
    pool: int,
    across_scripts: bool,
    asked: tuple[tuple[datetime, datetime], ...] = (),
    multilingual=None,
) -> tuple[dict[str, float], dict[str, float], set[str]]:
    """(cosine by memory, lexical evidence by memory, memories in the other script) of the `pool`
    best dense and lexical matches and the `pool` memories nearest the time the query names; the
    other script's latest memories when the encoder cannot compare across scripts and
    `across_scripts` asks for them: cosine 0 (unknown), or, given `multilingual`, the multilingual
    encoder's cosine for every candidate in the other script."""
    dense = dict(graph.dense_search(query_vector, pool))
    lexical = graph.lexical_search(query, pool) if ctx.lexical_weight > 0 else {}
    timed = graph.timed_search(asked, TIME_REACH * ctx.time_tolerance_days, pool) if asked else []
    missing = [i for i in dict.fromkeys([*lexical, *timed]) if i not in dense]
    dense.update(graph.cosine(query_vector, missing))
    uncomparable: set[str] = set()
    if across_scripts and not ctx.encoder_multilingual:
        other = not has_cjk(query)
        latest = graph.latest_in_script(other, pool)
        if multilingual is None:
            uncomparable = set(latest)
            dense.update((i, 0.0) for i in uncomparable)
        else:
            foreign = [*latest, *(i for i in dense if has_cjk(graph.attrs(i)["content"]) == other)]
            dense.update(_multilingual_cosines(graph, multilingual, query, list(dict.fromkeys(foreign)), ctx))
    return dense, lexical, uncomparable


def _multilingual_cosines(
    graph: WeightedKnowledgeGraph, multilingual, query: str, node_ids: list[str], ctx: PCMContext
) -> dict[str, float]:
    """The query's cosine with each memory by the multilingual encoder (`multilingual()` loads it
    on first use), own and contextual text mixed as the index mixes them."""
    if not node_ids:
        return {}
    encoder = multilingual()
    vectors = index_vectors(encoder.encode, [graph.node(i) for i in node_ids], ctx.context_weight)
    return dict(zip(node_ids, (vectors @ encoder.encode_one(in_first_person(query))).tolist()))


def _restatements(graph: WeightedKnowledgeGraph, hits: list[RetrievedMemory]) -> set[str]:
    """Hypotheses whose own observation (the memory of the turn that wrote them, linked
    `derived_from`) is also a hit: they restate it, so they give up their place to other evidence
    (they stay reachable by expansion)."""
    found = {h.id for h in hits}
    restating: set[str] = set()
    for hit in hits:
        if hit.type == NodeType.HYPOTHESIS:
            continue
        written = graph.attrs(hit.id)["created_at"]
        for source, _ in graph.in_edges(hit.id, "derived_from"):
            if source in found and graph.attrs(source)["created_at"] == written:
                restating.add(source)
    return restating


def _successors_first(
    graph: WeightedKnowledgeGraph,
    hits: list[RetrievedMemory],
    ctx: PCMContext,
    intent: Mapping[str, float] | None,
    exclude: set[str],
    use_contests: bool = True,
) -> list[RetrievedMemory]:
    """A superseded memory yields to what superseded it: the successor (1 hop along a standing
    `supersedes` edge, `pcm.world.supersession`) is placed directly above it, brought in if it was
    not retrieved, and its own successor above it in turn (the latest of a chain first). A contested
    fact (`pcm.evolution.profiling.contested_facts`) yields alike to a retrieved statement contesting
    it, while that statement was confirmed at least as recently as the fact: a doubt reorders what the
    query found, it brings nothing in (`use_contests` off: the ablation without contests)."""
    ordered: list[RetrievedMemory] = []
    by_id = {h.id: h for h in hits}
    placed: set[str] = set()

    def successors(hit: RetrievedMemory) -> Iterator[RetrievedMemory]:
        """What supersedes or contests `hit`, not placed yet (read lazily: a chain may place one)."""
        for source, attrs in [*standing_supersessions(graph, hit.id), *graph.in_edges(hit.id, "contests")]:
            if source in placed or source in exclude:
                continue
            if graph.attrs(source)["weight"] < graph.dormant_floor:
                continue
            if attrs["relation"] == "contests" and (
                not use_contests
                or source not in by_id
                or not _contest_stands(graph, source, hit.id, attrs["weight"], ctx)
            ):
                continue
            node = graph.attrs(source)
            relevance = intent_relevance(intent, node.get("domain"), node.get("domain_distribution"))
            yield by_id.get(source) or _as_retrieved(
                graph, source, hit.similarity, relevance, hit.score, "expansion:supersedes"
            )

    for hit in hits:
        if hit.id in placed:
            continue
        placed.add(hit.id)  # depth first without recursion (a chain can be long): the latest link first
        stack = [(hit, successors(hit))]
        while stack:
            memory, pending = stack[-1]
            successor = next(pending, None)
            if successor is None:
                stack.pop()
                ordered.append(memory)
            else:
                placed.add(successor.id)
                stack.append((successor, successors(successor)))
    return ordered


def _contest_stands(
    graph: WeightedKnowledgeGraph, contester: str, contested: str, p_contradiction: float, ctx: PCMContext
) -> bool:
    """A contest stands while its P(contradiction) reaches `contest_threshold` (None: contests are
    off), the contesting statement is not itself superseded (or was reaffirmed since), and it was
    confirmed (written or reinforced) no earlier than the fact it contests: a later confirmation of
    the fact settles the doubt (implicit verification)."""
    if ctx.contest_threshold is None or p_contradiction < ctx.contest_threshold:
        return False
    if standing_supersessions(graph, contester):
        return False
    return as_utc(graph.attrs(contester)["updated_at"]) >= as_utc(graph.attrs(contested)["updated_at"])


def _expand(
    graph: WeightedKnowledgeGraph,
    hits: list[RetrievedMemory],
    ctx: PCMContext,
    intent: Mapping[str, float] | None,
    use_weights: bool,
    exclude: set[str],
) -> list[RetrievedMemory]:
    """1-hop neighbours of the hits along edges of weight ≥ `expansion_min_weight`.

    A neighbour's score is its parent's score times the edge weight (times its own
    weight): expansion never outranks the memory it came from. Entity nodes are hubs,
    not answers: a hit's entity neighbour is stepped through to the entity's strongest
    other memories.
    """
    seen = {h.id for h in hits} | exclude
    found: dict[str, RetrievedMemory] = {}
    for hit in hits:
        for neighbour_id, edge in graph.neighbours(hit.id):
            if edge.weight < ctx.expansion_min_weight:
                continue
            targets = [(neighbour_id, edge.weight)]
            if graph.attrs(neighbour_id)["type"] == NodeType.ENTITY.value:
                targets = [
                    (i, edge.weight * e.weight)
                    for i, e in graph.neighbours(neighbour_id)[: ctx.expansion_limit]
                    if e.weight >= ctx.expansion_min_weight
                ]
            for target_id, strength in targets:
                attrs = graph.attrs(target_id)
                if target_id in seen or NodeType(attrs["type"]) not in RETRIEVABLE_TYPES:
                    continue
                if attrs["weight"] < graph.dormant_floor:
                    continue
                relevance = intent_relevance(intent, attrs.get("domain"), attrs.get("domain_distribution"))
                weight = attrs["weight"] if use_weights else 1.0
                score = hit.score * strength * weight
                if score > ctx.min_score and (target_id not in found or found[target_id].score < score):
                    found[target_id] = _as_retrieved(
                        graph, target_id, hit.similarity * strength, relevance, score, f"expansion:{edge.relation}"
                    )
    return sorted(found.values(), key=lambda m: -m.score)[: ctx.expansion_limit]
