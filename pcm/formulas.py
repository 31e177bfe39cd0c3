"""Every formula of the PCM specification, in one place.

Each function carries the formula it implements, with the section of
`pcm-math-formalization.md` (or the processing-flow document) it comes from,
so the maths can be checked against the spec here and nowhere else.
Weights are confidences in [0, 1]; every update clamps to that range.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

LEVELS = ("low", "medium", "high")


def clamp_weight(w: float) -> float:
    """Clamp a confidence weight to [0, 1] (spec §2.1: w ∈ [0, 1])."""
    return min(1.0, max(0.0, float(w)))


def softmax(scores: Sequence[float], temperature: float = 1.0) -> list[float]:
    """P(I | u) = Softmax(f(u) / T) (spec §3.1). Stable for large inputs."""
    if not scores:
        return []
    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    scaled = [s / temperature for s in scores]
    top = max(scaled)
    exps = [math.exp(s - top) for s in scaled]
    total = sum(exps)
    return [e / total for e in exps]


def retrieval_score(similarity: float, intent_relevance: float, weight: float) -> float:
    """Score(ε) = sim(emb(u), emb(ε)) · P(d(ε) | u) · w (spec §3.2); a negative cosine carries no evidence
    of relevance, so it is floored at 0."""
    return max(0.0, similarity) * intent_relevance * weight


def mix(a, b, weight: float):
    """(1 − μ)·a + μ·b, μ = `weight` ∈ [0, 1]: two estimates of one thing mixed (a memory's own text and
    its text in context, `pcm.world.representation`; the relation head's P(relation) and the
    cross-encoder's, `pcm.perception.relation`). Works elementwise on arrays."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError("weight must lie in [0, 1]")
    return (1.0 - weight) * a + weight * b


def raise_similarity(similarity: float, evidence: float, strength: float) -> float:
    """sim' = sim + κ · e · (1 − sim): evidence e ∈ [0, 1] closes a share κ of the gap to 1.

    Used for lexical evidence (e = BM25 score over the query's best, κ = `lexical_weight`) and for a
    query that names the memory's speaker (e = 1, κ = `speaker_weight`). With e = 0 or κ = 0 the
    similarity is unchanged; it never exceeds 1 when sim ≤ 1.
    """
    return similarity + strength * evidence * (1.0 - similarity)


def time_match(days_outside: float, tolerance_days: float) -> float:
    """e^(−d/τ): 1 inside the time a query asks about (d days outside it), falling by e per τ =
    `tolerance_days` outside (said a week after "in July", maybe about July); raised into sim."""
    if tolerance_days <= 0:
        raise ValueError("tolerance_days must be positive")
    return float(np.exp(-max(0.0, days_outside) / tolerance_days))


def same_day_evidence(day_best: float, best: float) -> float:
    """e_day = s_day / s_max: how strong the best match said on a memory's day is against the query's
    best match. A memory said on the same day as a strong match is likely part of the same story
    (one sitting, one event): `same_day_similarity`."""
    if best <= 0:
        return 0.0
    return min(1.0, max(0.0, day_best / best))


def same_day_score(score: float, evidence: float, strength: float) -> float:
    """Score' = Score · (1 + β · e_day), β = `day_weight`: a strong match's day rises in proportion to
    each memory's own score, so the order within a day stays (other forms measured worse:
    docs/measurement-log.md)."""
    return score * (1.0 + strength * evidence)


def nearby_turn_score(score: float, neighbour_score: float, turns_apart: int, strength: float) -> float:
    """Score' = Score + (β_n/Δ)·(S_n − Score)⁺: a memory said Δ ≥ 1 turns from a stronger match S_n in the
    same thread (the reply to it, the next part of its story) is pulled toward it, never past it, less
    the further apart; β_n = `nearby_weight` (a memory of the same turn counts as Δ = 1)."""
    return score + strength / max(1, turns_apart) * max(0.0, neighbour_score - score)


def shared_entity_score(score: float, source_score: float, mentions: int, memories: int, strength: float) -> float:
    """Score' = Score + β_e·ι_e·(S_e − Score)⁺, ι_e = log(N/n_e)/log N: a memory naming an entity e
    that a stronger match (S_e) names too is pulled toward it, never past it, by β_e = `entity_weight`
    times e's specificity (n_e of the N memories name e; a name in all links nothing)."""
    specificity = math.log(memories / max(mentions, 1)) / math.log(memories) if memories > 1 else 0.0
    return score + strength * min(1.0, max(0.0, specificity)) * max(0.0, source_score - score)


def retrieval_entropy(scores: Sequence[float]) -> float:
    """Normalised retrieval entropy H(C) ∈ [0, 1] (spec §4.2).

    ŝ = s / Σs over the retrieved context C, H(C) = −Σ ŝ log ŝ / log |C|.
    Dividing by log |C| keeps λ·H(C) ≤ λ whatever k is. A single memory is a certain retrieval
    (H = 0); an empty one is total ignorance (H = 1)."""
    positive = [s for s in scores if s > 0]
    if not positive:
        return 1.0
    if len(positive) == 1:
        return 0.0
    total = sum(positive)
    entropy = -sum((s / total) * math.log(s / total) for s in positive)
    return min(1.0, max(0.0, entropy / math.log(len(positive))))


def effective_surprisal(s_raw: float, entropy: float, lam: float, has_context: bool = True) -> float:
    """S_eff = S_raw · (1 − λ · H(C)) (spec §4.2).

    With nothing retrieved the input cannot conflict with memory (ignorance is not
    conflict), so surprise is suppressed to 0, as the blueprint's error handling asks.
    """
    if not has_context:
        return 0.0
    return s_raw * (1.0 - lam * entropy)


def hybrid_surprisal(semantic_distance: float, conflict: float, alpha: float) -> float:
    """S_raw = α · semantic_distance + (1 − α) · conflict_score (processing flow §5.1)."""
    return alpha * semantic_distance + (1.0 - alpha) * conflict


def surprise_level(s_eff: float, theta_low: float, theta_high: float) -> str:
    """low if S_eff ≤ θ_low, high if S_eff > θ_high, medium in between (spec §5.2)."""
    if theta_low > theta_high:
        raise ValueError("theta_low must not exceed theta_high")
    if s_eff <= theta_low:
        return "low"
    if s_eff > theta_high:
        return "high"
    return "medium"


def reinforce_weight(w: float, eta: float, certainty: float = 1.0) -> float:
    """Maintenance: w ← w + η · p · (1 − w) (spec §5.2 case A, where p = 1). Tends to 1, never exceeds it.

    p is how sure PCM is that the input confirms this memory (the relation model's P(consistent | memory,
    input)): the spec's step in expectation over that belief (w moves by η(1 − w) with probability p,
    else not), so a memory rises with confirmations, not with every later turn on the same subject."""
    if not 0.0 <= certainty <= 1.0:
        raise ValueError(f"certainty must lie in [0, 1], got {certainty}")
    return clamp_weight(w + eta * certainty * (1.0 - w))


def decay_weight(w: float, beta: float, s_eff: float) -> float:
    """Correction: w ← w · exp(−β · S_eff) (spec §5.2 case C)."""
    return clamp_weight(w * math.exp(-beta * s_eff))


def reaffirmed_weight(w: float, w_before: float) -> float:
    """A superseded memory that a later turn confirms: w ← max(w, w_before), w_before its weight
    just before the correction that superseded it. The correction's decay is undone; a
    reinforcement it received since is kept."""
    return clamp_weight(max(w, w_before))


def time_decay_weight(w: float, gamma: float, dt_days: float) -> float:
    """Unconfirmed hypothesis: w ← w · exp(−γ · Δt), Δt in days (spec §5.2 case B). Decay composes
    (e^{−γa}·e^{−γb} = e^{−γ(a+b)}), so applying it for each elapsed interval is exact. Negative Δt
    (clock skew, out-of-order replays) decays nothing."""
    return clamp_weight(w * math.exp(-gamma * max(0.0, dt_days)))


def hypothesis_weight(
    s_eff: float, theta_low: float, theta_high: float, w_min: float = 0.3, w_max: float = 0.5
) -> float:
    """Profiling: w_init = σ(S_eff) mapped to [w_min, w_max] (spec §5.2 case B).

    S_eff is centred on the medium band and scaled by its width, z = 4 · (S_eff − (θ_low + θ_high)/2) /
    (θ_high − θ_low), so the band's edges map to σ(±2) and the result does not depend on the scorer's
    scale: w_init = w_min + (w_max − w_min) · σ(z). The walkthrough's S_eff = 0.47 with θ = (0.3, 0.7)
    gives 0.385 (the document rounds to 0.38)."""
    width = max(theta_high - theta_low, 1e-9)
    z = 4.0 * (s_eff - (theta_low + theta_high) / 2.0) / width
    return w_min + (w_max - w_min) * sigmoid(z)


def sigmoid(z: float) -> float:
    """σ(z) = 1 / (1 + e^(−z)), computed without overflow for large |z|."""
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def smooth_distribution(distribution: Mapping[str, float], epsilon: float) -> dict[str, float]:
    """P'(d | u) = (1 − ε) · P(d | u) + ε / |D|: the intent mixed with a uniform prior.

    The router that gives P(d | u) is often wrong (about one domain in three on the
    scenario files), and the mask multiplies scores, so an unsmoothed wrong intent can
    all but erase the memory that answers the query; ε bounds that loss at ε/|D|.
    """
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError("epsilon must lie in [0, 1]")
    share = epsilon / len(distribution) if distribution else 0.0
    return {d: (1.0 - epsilon) * p + share for d, p in distribution.items()}


def distribution_confidence(distribution: Mapping[str, float]) -> float:
    """c = 1 − H(P) / log n: how sure a distribution P over n outcomes is (1: one outcome holds all
    the mass, 0: uniform). H is the Shannon entropy; a distribution over one outcome has c = 1."""
    positive = [p for p in distribution.values() if p > 0]
    if len(distribution) < 2 or not positive:
        return 1.0
    total = sum(positive)
    entropy = -sum((p / total) * math.log(p / total) for p in positive)
    return min(1.0, max(0.0, 1.0 - entropy / math.log(len(distribution))))


def confidence_smoothing(epsilon: float, confidence: float) -> float:
    """ε' = 1 − (1 − ε) · c: the intent mask's share of uniform prior, grown as the router's
    confidence c falls. c = 1 gives the configured ε; c = 0 (a uniform intent) gives ε' = 1, no mask.

    The mask multiplies every score, so an uncertain intent would reorder memories on noise: its
    estimate must say how little it knows (issue: a mask that cannot hurt)."""
    return 1.0 - (1.0 - epsilon) * min(1.0, max(0.0, confidence))


def domain_agreement(pairs: Sequence[tuple[Mapping[str, float], Mapping[str, float]]], min_pairs: int = 20) -> float:
    """ι = (A_o − A_e) / (1 − A_e), clipped to [0, 1]: how much more often related memories share a
    domain than chance (Cohen's κ over domain distributions).

    `pairs` are the domain distributions of neighbouring memories (consecutive turns of a thread,
    mostly about the same thing). A_o = mean over pairs of Σ_d P(d|a)·P(d|b), the chance that both
    fall in the same domain; A_e = Σ_d p̄_a(d)·p̄_b(d) with p̄ the mean distribution of each side,
    the same chance for unrelated memories. The intent mask assumes that what answers a query
    shares its domain; ι says how far this memory bears that out (0: domains say nothing about
    relatedness here). Fewer than `min_pairs` pairs is no evidence against the mask: ι = 1.
    """
    if len(pairs) < min_pairs:
        return 1.0
    domains = {d for a, b in pairs for d in (*a, *b)}
    observed = sum(sum(a.get(d, 0.0) * b.get(d, 0.0) for d in domains) for a, b in pairs) / len(pairs)
    mean_left = {d: sum(a.get(d, 0.0) for a, _ in pairs) / len(pairs) for d in domains}
    mean_right = {d: sum(b.get(d, 0.0) for _, b in pairs) / len(pairs) for d in domains}
    expected = sum(mean_left[d] * mean_right[d] for d in domains)
    if expected >= 1.0:
        return 1.0
    return min(1.0, max(0.0, (observed - expected) / (1.0 - expected)))


def agreement_beyond(agreement: float, floor: float) -> float:
    """ι' = max(0, (ι − ι₀) / (1 − ι₀)): the share of the domain agreement ι above a floor ι₀, rescaled
    to [0, 1] (ι₀ = 0: ι itself). Agreement up to ι₀ counts as none, so that a mask resting on it
    does not reorder memories on what is barely above chance (κ ≤ 0.2 is "slight" agreement)."""
    if not 0.0 <= floor < 1.0:
        raise ValueError("the agreement floor must lie in [0, 1)")
    return max(0.0, (agreement - floor) / (1.0 - floor))


def informativeness(content_words: int, saturation: int, exponent: float) -> float:
    """π(n) = min(1, max(n, 1) / n_sat)^γ: the share of a stated fact's weight it starts with, by how
    many content words n it holds. A document prior in the sense of language-model retrieval (Kraaij
    et al., 2002): a two-word turn ("Wow, congrats!") holds less to remember than a turn that tells a
    story, and the spec's score sim · P(d|I) · w has w as its one query-independent term. γ = 0 gives
    π = 1 (no prior); a turn of n_sat content words or more keeps its full weight."""
    if saturation < 1 or exponent < 0:
        raise ValueError("the informativeness saturation must be at least 1 and its exponent not negative")
    return min(1.0, max(content_words, 1) / saturation) ** exponent


def english_specificity(english_zipf: float, other_zipfs: Sequence[float]) -> float:
    """ς(w) = Z_en(w) − median_ℓ Z_ℓ(w), Zipf frequencies (`wordfreq`, 0 where absent): names keep
    their spelling across languages ("Paris" 0.3, "Max" 0.0), English words do not ("Got" 2.0)."""
    if not other_zipfs:
        raise ValueError("at least one other language is needed")
    return float(english_zipf - float(np.median(other_zipfs)))


def intent_relevance(
    distribution: Mapping[str, float] | None, domain: str | None, memory_distribution: Mapping[str, float] | None = None
) -> float:
    """P(d(ε) | u): the intent probability of the memory's domain (spec §3.2).

    A memory's domain d(ε) is itself a guess of the intent router (about two in three
    are right on the scenario files), so when the memory keeps its domain distribution
    P(d | ε) the relevance is its expectation over that uncertainty,
    E_{d∼P(·|ε)}[P(d | u)] = Σ_d P(d | u) · P(d | ε): the probability that query and memory
    belong to the same domain. With a certain domain this is the spec's P(d(ε) | u).
    Without an intent (the unmasked first retrieval) every domain has relevance 1.
    """
    if distribution is None:
        return 1.0
    if memory_distribution:
        return float(sum(p * float(distribution.get(d, 0.0)) for d, p in memory_distribution.items()))
    return float(distribution.get(domain or "", 0.0))


def bm25_idf(document_frequency: int, documents: int) -> float:
    """idf(t) = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5)): BM25's inverse document frequency,
    Lucene variant (Kamphuis et al., ECIR 2020), as `bm25s` computes it."""
    return math.log(1 + (documents - document_frequency + 0.5) / (document_frequency + 0.5))


def bm25_term_scores(idf, term_frequency, length, average_length, k1: float, b: float):
    """score(t, d) = idf(t) · tf / (k1 · ((1 − b) + b · |d| / avgdl) + tf): one term's BM25 score
    in each document (Lucene variant, without the constant (k1 + 1) factor, as `bm25s` stores it).

    Works elementwise on numpy arrays of term frequencies and document lengths, in the same
    order of operations as `bm25s`, so the float results are identical to its index.
    """
    return idf * (term_frequency / (k1 * ((1 - b) + b * length / average_length) + term_frequency))


def subspace_interaction(u, v, mean, components):
    """b(u, v) = vec(a·bᵀ), a = P(u − μ), b = P(v − μ): every product of a coordinate of the memory u
    with a coordinate of the statement v in a k-dimensional subspace of the encoder's space (P: k × d,
    rows the subspace's orthonormal basis; μ its centre).

    The relation head's `product` block u ⊙ v pairs each dimension only with itself, so a linear
    head over it can say "both are about diet" but not "the memory is about diet and the statement
    about meat". With b, the head is a rank-k bilinear form uᵀ·W·v: k² numbers, learnt from the
    pairs, in the subspace where the encoder's vectors vary most.
    """
    centre = np.asarray(mean, dtype=float)
    basis = np.asarray(components, dtype=float)
    a = basis @ (np.asarray(u, dtype=float) - centre)
    b = basis @ (np.asarray(v, dtype=float) - centre)
    return np.outer(a, b).ravel()


def joint_embedding(parts) -> np.ndarray:
    """x = [u₁; u₂; …; u_n] / √n: the vectors of one text from n encoders, side by side. With each
    uᵢ of unit length, x is too, and x·y = (1/n)·Σ uᵢ·vᵢ is the mean of the encoders' cosines, so
    the relation head's `cosine` block and the products keep their scale."""
    blocks = [np.asarray(part, dtype=float) for part in parts]
    if not blocks:
        raise ValueError("joint_embedding needs at least one encoder's vectors")
    return np.concatenate(blocks, axis=-1) / math.sqrt(len(blocks))


def pair_level(
    contradiction: float,
    consistent: float,
    cue_high: float,
    tau_contradiction: float,
    tau_consistent: float,
    tau_cue: float,
) -> str:
    """The pair router's level from the relation model's verdicts over the retrieved memories:

        high    if max_m P(contradiction | m, u) ≥ τ_c,
                or if P_cue(high | u) ≥ τ_cue and max_m P(consistent | m, u) < τ_l
        low     else if max_m P(consistent | m, u) ≥ τ_l
        medium  otherwise (nothing retrieved is contradicted or confirmed: the input is new).

    `contradiction` and `consistent` are maxima over the judged memories m; `cue_high`, the cue
    router's P(high), catches explicit revisions the encoder does not relate to the memory ("quit
    programming" against "Python backend developer") unless the relation model finds the input
    confirmed. τ_c, τ_l, τ_cue: fitted on dev files by `evals fit-relation` (τ_cue > 1: no cue path)."""
    if contradiction >= tau_contradiction or (cue_high >= tau_cue and consistent < tau_consistent):
        return "high"
    if consistent >= tau_consistent:
        return "low"
    return "medium"


def adapted_level_prior(
    posteriors: Sequence[Sequence[float]],
    pseudo_turns: float,
    base_prior: Sequence[float] = (1.0, 1.0, 1.0),
    iterations: int = 1,
) -> list[float]:
    """π̂(c) = (n₀·π₀(c) + Σ_t p̂(c|x_t)) / (n₀ + N): the share of each routing level (low, medium,
    high) among this user's N turns, shrunk towards the normalised base prior π₀ by n₀ =
    `pseudo_turns` pseudo-turns, with p̂(c|x_t) ∝ p(c|x_t)·π̂(c) the router's class-balanced
    posterior re-weighted by the current estimate.

    The router is fitted on balanced scenarios, but in real use revisions are rare: under label
    shift the posterior is re-weighted by π'(c)/π(c) (Saerens et al. 2002). From the uniform π̂,
    one step is the mean posterior; `iterations` > 1 repeats it (EM for the MAP estimate), until π̂
    moves by less than 1e-6. The n₀ pseudo-turns bound π̂(c) ≥ n₀·π₀(c)/(n₀ + N) and keep a new user
    (N ≪ n₀) at the base prior."""
    base = np.asarray(base_prior, dtype=float)
    base = base / base.sum()
    if not posteriors:
        return base.tolist()
    observed = np.asarray(posteriors, dtype=float)
    observed = observed / observed.sum(axis=1, keepdims=True)
    estimate = np.full(base.size, 1.0 / base.size)
    for _ in range(max(1, iterations)):
        reweighted = observed * estimate
        reweighted /= reweighted.sum(axis=1, keepdims=True)
        updated = (pseudo_turns * base + reweighted.sum(axis=0)) / (pseudo_turns + len(observed))
        moved = float(np.abs(updated - estimate).max())
        estimate = updated
        if moved < 1e-6:
            break
    return estimate.tolist()
