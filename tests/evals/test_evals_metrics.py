"""Hand-computed examples for the retrieval and QA metrics."""

import math

import pytest

from evals.bench.metrics import (
    aggregate,
    answer_scores,
    contains_match,
    exact_match,
    extract_numbers,
    is_abstention,
    ndcg_at_k,
    normalize_answer,
    numeric_match,
    precision_recall_f1,
    recall_at_k,
    session_hit_at_k,
    token_f1,
)

RANKED = [{"D1:1", "D1:2"}, {"D2:5"}, {"D3:1"}]
GOLD = ["D1:2", "D3:1", "D4:4"]


def test_recall_at_k_counts_gold_ids_covered_by_top_k():
    assert recall_at_k(RANKED, GOLD, 1) == pytest.approx(1 / 3)
    assert recall_at_k(RANKED, GOLD, 2) == pytest.approx(1 / 3)
    assert recall_at_k(RANKED, GOLD, 3) == pytest.approx(2 / 3)
    assert recall_at_k(RANKED, GOLD, 10) == pytest.approx(2 / 3)


def test_recall_at_k_item_built_from_two_dialog_ids_covers_both():
    assert recall_at_k([{"D1:1", "D1:2"}], ["D1:1", "D1:2"], 1) == 1.0


def test_recall_at_k_edge_cases():
    assert recall_at_k(RANKED, [], 5) is None
    assert recall_at_k([], GOLD, 5) == 0.0
    with pytest.raises(ValueError):
        recall_at_k(RANKED, GOLD, 0)


def test_session_hit_at_k():
    ranked = [{"D1:1"}, {"D3:9"}]
    assert session_hit_at_k(ranked, ["D3:5"], 1) == 0.0
    assert session_hit_at_k(ranked, ["D3:5"], 2) == 1.0
    assert session_hit_at_k(ranked, ["D7:1", "D1:4"], 1) == 1.0
    assert session_hit_at_k(ranked, ["D"], 2) is None


def test_ndcg_at_k_skips_items_repeating_covered_evidence():
    ranked = [{"D9:9"}, {"D1:1", "D1:2"}, {"D1:1"}, {"D2:2"}]
    gold = ["D1:1", "D1:2", "D2:2"]
    # gains 0, 1, 0 (D1:1 already covered), 1; ideal: 3 relevant items on top.
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3) + 1 / math.log2(4))
    assert ndcg_at_k(ranked, gold, 4) == pytest.approx(expected)
    assert ndcg_at_k(ranked, gold, 4) == pytest.approx(0.49818, abs=1e-5)


def test_ndcg_at_k_known_values():
    assert ndcg_at_k([{"D1:1"}, {"D2:2"}], ["D1:1"], 2) == 1.0
    assert ndcg_at_k([{"D2:2"}, {"D1:1"}], ["D1:1"], 2) == pytest.approx(1 / math.log2(3))
    # ideal DCG uses min(k, |gold|) = 1 relevant item at k=1
    assert ndcg_at_k([{"D1:1"}], ["D1:1", "D1:2"], 1) == 1.0
    # one item covering all three gold ids earns one gain of 1 against an ideal of 1 + 1/log2(3)
    assert ndcg_at_k([{"D1:1", "D1:2", "D1:3"}], ["D1:1", "D1:2", "D1:3"], 2) == pytest.approx(1 / 1.6309298, rel=1e-6)
    assert ndcg_at_k([{"D5:5"}], ["D1:1"], 3) == 0.0
    assert ndcg_at_k([{"D5:5"}], [], 3) is None


def test_aggregate_overall_and_per_category_means():
    rows = [
        {"category": 1, "recall@5": 1.0, "f1": 0.5, "question": "q1"},
        {"category": 1, "recall@5": 0.0, "f1": None, "question": "q2"},
        {"category": 2, "recall@5": 0.5, "f1": 1.0, "hit": True, "question": "q3"},
    ]
    summary = aggregate(rows)
    assert summary["overall"] == {"count": 3, "recall@5": pytest.approx(0.5), "f1": pytest.approx(0.75), "hit": 1.0}
    assert summary["per_category"][1] == {"count": 2, "recall@5": 0.5, "f1": 0.5}
    assert summary["per_category"][2] == {"count": 1, "recall@5": 0.5, "f1": 1.0, "hit": 1.0}
    assert list(aggregate(rows, metric_keys={"f1"})["overall"]) == ["count", "f1"]


def test_normalize_answer():
    assert normalize_answer("The  Quick, brown fox!") == "quick brown fox"
    assert normalize_answer("An apple a day") == "apple day"
    assert normalize_answer(2022) == "2022"
    assert normalize_answer("  Theatre ") == "theatre"


def test_exact_match():
    assert exact_match("the Cat.", "cat") == 1.0
    assert exact_match("a cat", "dog") == 0.0


def test_token_f1_hand_examples():
    # prediction tokens: red car in paris; gold: red car -> P = 2/4, R = 2/2
    assert token_f1("a red car in Paris", "red car") == pytest.approx(2 / 3)
    # repeated tokens count once per gold occurrence: P = 1/2, R = 1
    assert token_f1("dog dog", "dog") == pytest.approx(2 / 3)
    assert token_f1("blue", "red") == 0.0
    assert token_f1("", "") == 1.0
    assert token_f1("the", "red") == 0.0
    # CJK characters are single tokens: overlap 北, 京 -> P = 2/2, R = 2/3
    assert token_f1("北京", "去北京") == pytest.approx(0.8)


def test_contains_match():
    assert contains_match("She went to Paris in June", "Paris") == 1.0
    assert contains_match("Paris", "Paris, France") == 1.0
    assert contains_match("party", "art") == 0.0
    assert contains_match("", "art") == 0.0
    assert contains_match("the", "the") == 0.0


def test_numeric_match():
    assert numeric_match("She is 25 years old", "25") == 1.0
    assert numeric_match("twenty-five", "25") == 1.0
    assert numeric_match("May 8, 2023", "7 May 2023") == 1.0
    assert numeric_match("three times", "2") == 0.0
    assert numeric_match("Paris", "Paris") == 0.0
    assert extract_numbers("1,000 people, 3.5 hours, 7th, nineteen") == {1000.0, 3.5, 7.0, 19.0}


def test_is_abstention():
    assert is_abstention("This is not mentioned in the conversation.")
    assert is_abstention("I don\u2019t know")
    assert is_abstention("No information available")
    assert is_abstention("Unknown")
    assert is_abstention("对话中没有提到")
    assert not is_abstention("Paris")
    assert not is_abstention("")


def test_answer_scores_rewards_abstention_on_adversarial_questions():
    assert answer_scores("Not mentioned", "self-care is important", 5)["exact_match"] == 1.0
    assert answer_scores("self-care is important", "self-care is important", 5)["token_f1"] == 0.0
    scores = answer_scores("In 2022", "2022", 2)
    assert scores["exact_match"] == 0.0
    assert scores["contains_match"] == 1.0
    assert scores["numeric_match"] == 1.0
    assert scores["token_f1"] == pytest.approx(2 / 3)


def test_paired_difference_tells_a_real_gap_from_noise():
    from evals.bench.metrics import paired_difference

    base = [{"recall@10": float(i % 2)} for i in range(400)]
    better = [{"recall@10": 1.0} for _ in range(400)]  # wins 200 questions, loses none
    real = paired_difference(better, base, "recall@10")
    assert real["difference"] == pytest.approx(0.5) and (real["better"], real["worse"]) == (200, 0)
    assert 0 < real["ci95"][0] < 0.5 < real["ci95"][1]
    swapped = [{"recall@10": float((i + 1) % 2)} if i < 8 else row for i, row in enumerate(base)]
    noise = paired_difference(swapped, base, "recall@10")  # 4 wins, 4 losses
    assert noise["difference"] == 0 and (noise["better"], noise["worse"]) == (4, 4)
    assert noise["ci95"][0] < 0 < noise["ci95"][1]
    same = paired_difference(base, base, "recall@10")
    assert same["ci95"] == [0.0, 0.0]
    with pytest.raises(ValueError):
        paired_difference(base, base[:3], "recall@10")


def test_paired_difference_per_group_shows_where_a_gap_comes_from():
    from evals.bench.metrics import paired_difference

    base = [{"recall@10": 0.0} for _ in range(6)]
    rows = [
        {"recall@10": 1.0},
        {"recall@10": 1.0},
        {"recall@10": 0.0},
        {"recall@10": 0.0},
        {"recall@10": 0.0},
        {"recall@10": None},
    ]
    groups = ["conv-a", "conv-a", "conv-b", "conv-b", "conv-b", "conv-b"]
    gap = paired_difference(rows, base, "recall@10", groups=groups)
    assert gap["difference"] == pytest.approx(0.4) and gap["questions"] == 5
    assert gap["per_group"] == {"conv-a": 1.0, "conv-b": 0.0}  # the whole gap is conv-a's
    assert "per_group" not in paired_difference(rows, base, "recall@10")
    with pytest.raises(ValueError, match="one group per row"):
        paired_difference(rows, base, "recall@10", groups=groups[:2])


def test_precision_recall_f1_is_micro_and_perfect_when_nothing_is_to_be_found():
    assert precision_recall_f1(2, 3, 4) == {
        "precision": pytest.approx(2 / 3),
        "recall": 0.5,
        "f1": pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5)),
    }
    assert precision_recall_f1(0, 0, 0) == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert precision_recall_f1(0, 2, 1)["f1"] == 0.0
