"""One test per formula of pcm-math-formalization.md (and the processing-flow document)."""

import math

import numpy as np
import pytest

from pcm import formulas as f


def test_softmax_sums_to_one_and_sharpens_with_low_temperature():
    p = f.softmax([1.0, 2.0, 3.0])
    assert sum(p) == pytest.approx(1.0)
    assert p[2] == pytest.approx(math.exp(3) / (math.exp(1) + math.exp(2) + math.exp(3)))
    assert f.softmax([1.0, 2.0], temperature=0.1)[1] > f.softmax([1.0, 2.0], temperature=1.0)[1]
    with pytest.raises(ValueError):
        f.softmax([1.0], temperature=0)


def test_retrieval_score_is_similarity_times_intent_times_weight():
    assert f.retrieval_score(0.8, 0.5, 0.9) == pytest.approx(0.36)
    assert f.retrieval_score(-0.3, 1.0, 1.0) == 0.0


def test_intent_relevance_reads_the_memory_domain():
    assert f.intent_relevance({"Coding": 0.7, "Casual": 0.3}, "Casual") == pytest.approx(0.3)
    assert f.intent_relevance({"Coding": 1.0}, "Unknown") == 0.0
    assert f.intent_relevance(None, "Coding") == 1.0


def test_smooth_distribution_mixes_in_a_uniform_prior():
    smoothed = f.smooth_distribution({"Coding": 0.9, "Casual": 0.1, "Personal": 0.0}, 0.3)
    assert smoothed == pytest.approx({"Coding": 0.7 * 0.9 + 0.1, "Casual": 0.7 * 0.1 + 0.1, "Personal": 0.1})
    assert sum(smoothed.values()) == pytest.approx(1.0)
    assert f.smooth_distribution({"Coding": 0.9, "Casual": 0.1}, 0.0) == {"Coding": 0.9, "Casual": 0.1}
    with pytest.raises(ValueError):
        f.smooth_distribution({"Coding": 1.0}, 1.5)


def test_intent_relevance_takes_the_expectation_over_an_uncertain_memory_domain():
    query = {"Coding": 0.7, "Casual": 0.3}
    memory = {"Coding": 0.5, "Casual": 0.25, "Personal": 0.25}
    assert f.intent_relevance(query, "Coding", memory) == pytest.approx(0.7 * 0.5 + 0.3 * 0.25)
    assert f.intent_relevance(query, "Casual", {"Casual": 1.0}) == f.intent_relevance(query, "Casual")


def test_retrieval_entropy_is_normalised_shannon_entropy():
    assert f.retrieval_entropy([0.5, 0.5]) == pytest.approx(1.0)
    assert f.retrieval_entropy([0.9]) == 0.0
    assert f.retrieval_entropy([]) == 1.0
    scores = [0.6, 0.3, 0.1]
    expected = -sum(s * math.log(s) for s in scores) / math.log(3)
    assert f.retrieval_entropy(scores) == pytest.approx(expected)
    assert f.retrieval_entropy([6, 3, 1]) == pytest.approx(expected)


def test_effective_surprisal_discounts_by_retrieval_entropy():
    assert f.effective_surprisal(4.0, 0.5, 0.3) == pytest.approx(4.0 * (1 - 0.15))
    assert f.effective_surprisal(4.0, 0.0, 0.3) == 4.0
    assert f.effective_surprisal(4.0, 1.0, 0.3, has_context=False) == 0.0


def test_hybrid_surprisal_matches_the_processing_flow_example():
    assert f.hybrid_surprisal(0.6, 0.4, 0.6) == pytest.approx(0.52)
    assert f.effective_surprisal(0.52, 0.3, 0.3) == pytest.approx(0.4732)


def test_surprise_level_bands():
    assert f.surprise_level(0.3, 0.3, 0.7) == "low"
    assert f.surprise_level(0.5, 0.3, 0.7) == "medium"
    assert f.surprise_level(0.7, 0.3, 0.7) == "medium"
    assert f.surprise_level(0.71, 0.3, 0.7) == "high"
    with pytest.raises(ValueError):
        f.surprise_level(0.5, 0.8, 0.7)


def test_reinforce_weight_approaches_one():
    assert f.reinforce_weight(0.7, 0.05) == pytest.approx(0.715)
    assert f.reinforce_weight(0.38, 0.05) == pytest.approx(0.411)
    w = 0.5
    for _ in range(500):
        w = f.reinforce_weight(w, 0.05)
    assert w <= 1.0


def test_reinforce_weight_scales_with_how_sure_the_confirmation_is():
    assert f.reinforce_weight(0.7, 0.05, certainty=1.0) == f.reinforce_weight(0.7, 0.05)
    assert f.reinforce_weight(0.7, 0.05, certainty=0.4) == pytest.approx(0.7 + 0.05 * 0.4 * 0.3)
    assert f.reinforce_weight(0.7, 0.05, certainty=0.0) == pytest.approx(0.7)
    with pytest.raises(ValueError):
        f.reinforce_weight(0.7, 0.05, certainty=-0.1)


def test_decay_weight_matches_the_walkthrough():
    assert f.decay_weight(0.85, 0.3, 0.73) == pytest.approx(0.85 * math.exp(-0.219))
    assert f.decay_weight(0.85, 0.3, 0.73) == pytest.approx(0.68, abs=0.005)


def test_time_decay_weight():
    assert f.time_decay_weight(0.4, 0.1, 2.0) == pytest.approx(0.4 * math.exp(-0.2))
    split = f.time_decay_weight(f.time_decay_weight(0.4, 0.1, 1.0), 0.1, 1.0)
    assert split == pytest.approx(f.time_decay_weight(0.4, 0.1, 2.0))
    assert f.time_decay_weight(0.4, 0.1, -5.0) == 0.4


def test_hypothesis_weight_maps_sigmoid_into_the_band():
    assert f.hypothesis_weight(0.47, 0.3, 0.7) == pytest.approx(0.385, abs=0.001)
    assert 0.3 < f.hypothesis_weight(0.31, 0.3, 0.7) < f.hypothesis_weight(0.69, 0.3, 0.7) < 0.5
    assert 0.3 <= f.hypothesis_weight(-100, 0.3, 0.7) and f.hypothesis_weight(100, 0.3, 0.7) <= 0.5


def test_sigmoid_is_stable():
    assert f.sigmoid(0) == 0.5 and f.sigmoid(-1000) == 0.0 and f.sigmoid(1000) == 1.0
    assert f.sigmoid(2.0) == pytest.approx(1 / (1 + math.exp(-2)))


def test_clamp_weight():
    assert f.clamp_weight(1.5) == 1.0 and f.clamp_weight(-0.1) == 0.0 and f.clamp_weight(0.4) == 0.4


def test_bm25_idf_and_term_score_follow_the_lucene_variant():
    assert f.bm25_idf(1, 10) == pytest.approx(math.log(1 + 9.5 / 1.5))
    assert f.bm25_idf(10, 10) < f.bm25_idf(1, 10)
    # a document of average length: tf / (k1 + tf); longer documents score lower
    assert f.bm25_term_scores(2.0, 1.0, 5, 5.0, 1.5, 0.75) == pytest.approx(2.0 * 1.0 / (1.5 + 1.0))
    assert f.bm25_term_scores(2.0, 1.0, 10, 5.0, 1.5, 0.75) < f.bm25_term_scores(2.0, 1.0, 5, 5.0, 1.5, 0.75)


def test_pair_level_reads_contradiction_first_then_confirmation():
    assert f.pair_level(0.7, 0.9, 0.0, 0.6, 0.5, 0.8) == "high"
    assert f.pair_level(0.59, 0.5, 0.0, 0.6, 0.5, 0.8) == "low"
    assert f.pair_level(0.3, 0.49, 0.0, 0.6, 0.5, 0.8) == "medium"
    assert f.pair_level(0.6, 0.0, 0.0, 0.6, 0.5, 0.8) == "high"
    # the cue router's confident "high" counts unless the input is found confirmed
    assert f.pair_level(0.1, 0.2, 0.9, 0.6, 0.5, 0.8) == "high"
    assert f.pair_level(0.1, 0.6, 0.9, 0.6, 0.5, 0.8) == "low"
    assert f.pair_level(0.1, 0.2, 0.9, 0.6, 0.5, 1.01) == "medium"


def test_mix_is_a_convex_combination():
    assert f.mix(1.0, 3.0, 0.5) == pytest.approx(2.0)
    assert f.mix(1.0, 3.0, 0.0) == 1.0 and f.mix(1.0, 3.0, 1.0) == 3.0
    import numpy as np

    assert np.allclose(f.mix(np.array([1.0, 0.0]), np.array([0.0, 1.0]), 0.25), [0.75, 0.25])
    with pytest.raises(ValueError):
        f.mix(1.0, 2.0, 1.5)


def test_raise_similarity_closes_a_share_of_the_gap():
    assert f.raise_similarity(0.4, 1.0, 0.5) == pytest.approx(0.7)
    assert f.raise_similarity(0.4, 0.0, 0.5) == 0.4 and f.raise_similarity(0.4, 1.0, 0.0) == 0.4
    assert f.raise_similarity(0.9, 1.0, 1.0) == pytest.approx(1.0)
    assert f.raise_similarity(0.2, 0.5, 0.6) < f.raise_similarity(0.2, 1.0, 0.6)


def test_distribution_confidence():
    assert f.distribution_confidence({"a": 1.0, "b": 0.0}) == pytest.approx(1.0)
    assert f.distribution_confidence({"a": 0.5, "b": 0.5}) == pytest.approx(0.0)
    assert f.distribution_confidence({"a": 1.0}) == 1.0
    assert 0 < f.distribution_confidence({"a": 0.7, "b": 0.2, "c": 0.1}) < 1
    h = -(0.9 * math.log(0.9) + 0.1 * math.log(0.1)) / math.log(2)
    assert f.distribution_confidence({"a": 0.9, "b": 0.1}) == pytest.approx(1 - h)


def test_confidence_smoothing_tends_to_no_mask_when_unsure():
    assert f.confidence_smoothing(0.5, 1.0) == pytest.approx(0.5)
    assert f.confidence_smoothing(0.5, 0.0) == pytest.approx(1.0)
    assert f.confidence_smoothing(0.0, 0.4) == pytest.approx(0.6)
    assert f.confidence_smoothing(0.5, 0.2) > f.confidence_smoothing(0.5, 0.8)


def test_agreement_beyond_a_floor_counts_slight_agreement_as_none():
    assert f.agreement_beyond(0.15, 0.2) == 0.0
    assert f.agreement_beyond(0.6, 0.2) == pytest.approx(0.5)
    assert f.agreement_beyond(1.0, 0.2) == pytest.approx(1.0)
    assert f.agreement_beyond(0.3, 0.0) == pytest.approx(0.3)
    with pytest.raises(ValueError):
        f.agreement_beyond(0.5, 1.0)


def test_informativeness_is_a_capped_power_of_the_content_words():
    # π(n) = min(1, max(n, 1) / n_sat)^γ
    assert f.informativeness(3, 30, 0.05) == pytest.approx(0.1**0.05)
    assert f.informativeness(0, 30, 0.05) == f.informativeness(1, 30, 0.05) == pytest.approx((1 / 30) ** 0.05)
    assert f.informativeness(30, 30, 0.05) == f.informativeness(90, 30, 0.05) == 1.0
    assert f.informativeness(3, 30, 0.0) == 1.0  # γ = 0: no prior
    assert f.informativeness(5, 30, 0.05) < f.informativeness(15, 30, 0.05) < 1.0
    with pytest.raises(ValueError):
        f.informativeness(5, 0, 0.05)
    with pytest.raises(ValueError):
        f.informativeness(5, 30, -0.1)


def test_domain_agreement_is_kappa_over_neighbouring_memories():
    work, health = {"Work": 1.0}, {"Health": 1.0}
    always_same = [(work, work), (health, health)] * 10
    assert f.domain_agreement(always_same) == pytest.approx(1.0)
    # neighbours share a domain exactly as often as two memories drawn at random: domains say nothing
    chance = [(work, health), (health, work), (work, work), (health, health)] * 5
    assert f.domain_agreement(chance) == pytest.approx(0.0)
    # 3 of 4 pairs agree, chance is 1/2: κ = (0.75 − 0.5) / (1 − 0.5) = 0.5
    half = [(work, work), (health, health), (work, work), (work, health)] * 5
    observed, expected = 0.75, (0.75 * 0.5 + 0.25 * 0.5)
    assert f.domain_agreement(half) == pytest.approx((observed - expected) / (1 - expected))
    soft = [({"Work": 0.5, "Health": 0.5}, {"Work": 0.5, "Health": 0.5})] * 20
    assert f.domain_agreement(soft) == pytest.approx(0.0)
    assert f.domain_agreement(always_same[:4]) == 1.0  # too few pairs: no evidence against the mask
    assert f.domain_agreement([(work, health), (health, work)] * 10) == 0.0  # below chance is clipped


def test_adapted_level_prior_is_the_mean_balanced_posterior_shrunk_to_the_base_prior():
    # no turns yet: the (normalised) base prior
    assert f.adapted_level_prior([], 30.0, (1.0, 1.0, 2.0)) == pytest.approx([0.25, 0.25, 0.5])
    # (n₀·π₀ + Σ p) / (n₀ + N): 10 pseudo-turns at 1/3 each, 10 turns that look like small talk
    chat = [[0.8, 0.15, 0.05]] * 10
    expected = [(10 / 3 + 8.0) / 20, (10 / 3 + 1.5) / 20, (10 / 3 + 0.5) / 20]
    assert f.adapted_level_prior(chat, 10.0) == pytest.approx(expected)
    # the more turns, the closer to their own shares; still a distribution
    many = f.adapted_level_prior(chat * 100, 10.0)
    assert sum(many) == pytest.approx(1.0) and many[2] < expected[2] and many[2] > 0.05
    # unnormalised rows count as distributions
    assert f.adapted_level_prior([[8, 1.5, 0.5]] * 10, 10.0) == pytest.approx(expected)


def test_adapted_level_prior_with_em_steps_reaches_the_map_estimate_and_keeps_its_floor():
    # 100 turns the router finds mostly routine, with some spurious "high" mass on each
    chat = [[0.7, 0.1, 0.2]] * 100
    one = f.adapted_level_prior(chat, 10.0)
    em = f.adapted_level_prior(chat, 10.0, iterations=200)
    assert em[0] > one[0] and em[2] < one[2] and sum(em) == pytest.approx(1.0)
    # a fixed point: one more EM step (re-weight by the estimate, then the smoothed mean) moves nothing
    weighted = [[p * q for p, q in zip(row, em)] for row in chat]
    step = [(10.0 / 3 + sum(r[c] / sum(r) for r in weighted)) / 110 for c in range(3)]
    assert step == pytest.approx(em, abs=1e-5)
    # never below the pseudo-turns' share n0·π0/(n0 + N), however routine the turns look
    assert min(em) >= 10.0 / 3 / 110 - 1e-12
    # iterations=1 is the one-step estimate; no turns keeps the base prior whatever the iterations
    assert f.adapted_level_prior(chat, 10.0, iterations=1) == pytest.approx(one)
    assert f.adapted_level_prior([], 30.0, (1.0, 1.0, 2.0), iterations=50) == pytest.approx([0.25, 0.25, 0.5])


def test_reaffirmed_weight_undoes_the_correction_decay_and_keeps_a_later_rise():
    decayed = f.decay_weight(0.8, 0.3, 0.8)
    assert f.reaffirmed_weight(decayed, 0.8) == pytest.approx(0.8)
    assert f.reaffirmed_weight(0.85, 0.8) == pytest.approx(0.85)
    assert f.reaffirmed_weight(0.5, 1.2) == 1.0


def test_subspace_interaction_is_every_product_of_the_projected_coordinates():
    mean = [1.0, 0.0, 0.0]
    components = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]  # k = 2 of d = 3
    u, v = [3.0, 1.0, 5.0], [2.0, -1.0, 7.0]
    a, b = [2.0, 1.0], [1.0, -1.0]  # P(u − μ), P(v − μ): the third dimension is outside the subspace
    assert f.subspace_interaction(u, v, mean, components).tolist() == [
        a[0] * b[0],
        a[0] * b[1],
        a[1] * b[0],
        a[1] * b[1],
    ]
    # a bilinear form uᵀWv with W = Pᵀ·M·P is the dot product of M's entries with b(u, v)
    m = [[0.5, -2.0], [1.5, 3.0]]
    w = [
        [sum(components[i][r] * m[i][j] * components[j][c] for i in range(2) for j in range(2)) for c in range(3)]
        for r in range(3)
    ]
    centred_u = [x - y for x, y in zip(u, mean)]
    centred_v = [x - y for x, y in zip(v, mean)]
    bilinear = sum(centred_u[r] * w[r][c] * centred_v[c] for r in range(3) for c in range(3))
    flat = [x for row in m for x in row]
    assert sum(x * y for x, y in zip(flat, f.subspace_interaction(u, v, mean, components))) == pytest.approx(bilinear)


def test_joint_embedding_keeps_unit_length_and_averages_the_encoders_cosines():
    u1, v1 = np.array([0.6, 0.8]), np.array([1.0, 0.0])  # encoder 1: cosine 0.6
    u2, v2 = np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0])  # encoder 2: cosine 0
    x, y = f.joint_embedding([u1, u2]), f.joint_embedding([v1, v2])
    assert x.shape == (5,)
    assert np.linalg.norm(x) == pytest.approx(1.0)
    assert float(x @ y) == pytest.approx(0.3)
    rows = f.joint_embedding([np.stack([u1, v1]), np.stack([u2, v2])])  # one text per row
    assert rows.shape == (2, 5) and np.allclose(rows[0], x)
    with pytest.raises(ValueError):
        f.joint_embedding([])


def test_english_specificity_is_the_english_zipf_above_the_median_of_other_languages():
    assert f.english_specificity(5.3, [2.9, 2.7, 2.5, 2.5, 2.4, 3.0]) == pytest.approx(5.3 - 2.6)
    assert f.english_specificity(4.8, [4.9, 5.7, 4.1]) == pytest.approx(-0.1)
    with pytest.raises(ValueError):
        f.english_specificity(4.0, [])


def test_time_match_is_one_inside_the_window_and_falls_by_e_per_tolerance_outside():
    assert f.time_match(0.0, 7.0) == 1.0
    assert f.time_match(7.0, 7.0) == pytest.approx(np.exp(-1))
    assert f.time_match(-3.0, 7.0) == 1.0  # inside
    assert f.time_match(14.0, 7.0) < f.time_match(7.0, 7.0)
    with pytest.raises(ValueError):
        f.time_match(1.0, 0.0)


def test_same_day_evidence_is_the_days_best_match_against_the_querys_best():
    assert f.same_day_evidence(0.6, 0.6) == 1.0
    assert f.same_day_evidence(0.3, 0.6) == pytest.approx(0.5)
    assert f.same_day_evidence(0.3, 0.0) == 0.0


def test_shared_entity_score_pulls_toward_a_stronger_match_never_past_it():
    # ι_e = log(100/10)/log(100) = 0.5: half of β_e·(S_e − Score)
    assert f.shared_entity_score(0.2, 0.6, 10, 100, 1.0) == pytest.approx(0.2 + 0.5 * 0.4)
    assert f.shared_entity_score(0.2, 0.6, 10, 100, 0.5) == pytest.approx(0.2 + 0.25 * 0.4)
    assert f.shared_entity_score(0.2, 0.6, 1, 100, 1.0) == pytest.approx(0.6)  # a name only they share
    assert f.shared_entity_score(0.2, 0.6, 100, 100, 1.0) == pytest.approx(0.2)  # a name in every memory
    assert f.shared_entity_score(0.7, 0.6, 1, 100, 1.0) == 0.7  # a weaker match pulls nothing
    assert f.shared_entity_score(0.2, 0.6, 1, 1, 1.0) == 0.2  # one memory: no specificity


def test_nearby_turn_score_pulls_toward_a_stronger_turn_less_the_further_apart():
    assert f.nearby_turn_score(0.2, 0.6, 1, 0.25) == pytest.approx(0.2 + 0.25 * 0.4)
    assert f.nearby_turn_score(0.2, 0.6, 2, 0.25) == pytest.approx(0.2 + 0.125 * 0.4)
    assert f.nearby_turn_score(0.2, 0.6, 0, 0.25) == f.nearby_turn_score(0.2, 0.6, 1, 0.25)  # the same turn: Δ = 1
    assert f.nearby_turn_score(0.7, 0.6, 1, 0.25) == 0.7  # a weaker turn pulls nothing
    assert f.nearby_turn_score(0.2, 0.6, 1, 1.0) == pytest.approx(0.6)  # never past it
    assert f.nearby_turn_score(0.2, 0.6, 1, 0.0) == 0.2


def test_same_day_score_scales_the_score_by_the_days_evidence():
    assert f.same_day_score(0.4, 1.0, 0.5) == pytest.approx(0.6)
    assert f.same_day_score(0.4, 0.5, 0.5) == pytest.approx(0.5)
    assert f.same_day_score(0.0, 1.0, 0.5) == 0.0 and f.same_day_score(0.4, 1.0, 0.0) == 0.4
    # a weaker memory of the best match's day can pass a slightly stronger one of a weak day
    assert f.same_day_score(0.30, 1.0, 0.5) > f.same_day_score(0.32, f.same_day_evidence(0.32, 0.6), 0.5)
