"""Retrieval and question-answering metrics for LoCoMo-style evaluation.

Retrieval metrics take the ranked retrieved items as a sequence of dialog-id
collections: item ``i`` is the set of dialog ids (``"D3:5"``, ...) that the
``i``-th retrieved memory was built from. Every metric returns None when it is
undefined for the question (no gold evidence); :func:`aggregate` skips those.

QA metrics follow the SQuAD / LoCoMo / Mem0 conventions; each returns 1.0 or
0.0 except :func:`token_f1`.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter
from typing import Any, Collection, Iterable, Mapping, Sequence

import numpy as np

from pcm.datasets.locomo import ADVERSARIAL_CATEGORY, session_of

RankedDialogIds = Sequence[Collection[str]]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_CJK_CHARACTER = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af])")
_NUMBER = re.compile(r"(?<![\d.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)")
_UNIT_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS_WORDS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_NUMBER_WORD = re.compile(
    r"\b(?:(?P<tens>"
    + "|".join(_TENS_WORDS)
    + r")(?:[\s-](?P<unit_after_tens>"
    + "|".join(name for name in _UNIT_WORDS if _UNIT_WORDS[name] < 10)
    + r"))?|(?P<unit>"
    + "|".join(_UNIT_WORDS)
    + r"))\b"
)
_ABSTENTION_PHRASES = (
    "not mentioned",
    "never mentioned",
    "no mention",
    "not discussed",
    "no information",
    "not enough information",
    "insufficient information",
    "no relevant information",
    "not provided",
    "not specified",
    "not stated",
    "not available",
    "cannot answer",
    "can't answer",
    "cannot be answered",
    "can't be answered",
    "cannot be determined",
    "can't be determined",
    "unable to answer",
    "unable to determine",
    "unanswerable",
    "unknown",
    "don't know",
    "do not know",
    "no answer",
    "not known",
    "没有提到",
    "未提及",
    "没有提及",
    "没有相关信息",
    "没有信息",
    "无法回答",
    "不知道",
    "无法确定",
)


def _validate_k(k: int) -> None:
    if k <= 0:
        raise ValueError(f"k must be a positive integer, got {k}")


def recall_at_k(retrieved: RankedDialogIds, gold_ids: Iterable[str], k: int) -> float | None:
    """Turn-level recall: the fraction of gold dialog ids covered by the top-k items.

    An item covers every dialog id it was built from, so one summary built from
    ``D1:1`` and ``D1:2`` can recover two gold ids at once. None if there is no gold id.
    """
    _validate_k(k)
    gold = set(gold_ids)
    if not gold:
        return None
    covered = set().union(*retrieved[:k])
    return len(gold & covered) / len(gold)


def session_hit_at_k(retrieved: RankedDialogIds, gold_ids: Iterable[str], k: int) -> float | None:
    """1.0 if any top-k item comes from a session holding gold evidence (``"D3:5"`` is session 3), else 0.0.

    None if no gold id names a session.
    """
    _validate_k(k)
    gold_sessions = {session for session in map(session_of, gold_ids) if session is not None}
    if not gold_sessions:
        return None
    for item in retrieved[:k]:
        if any(session_of(dialog_id) in gold_sessions for dialog_id in item):
            return 1.0
    return 0.0


def ndcg_at_k(retrieved: RankedDialogIds, gold_ids: Iterable[str], k: int) -> float | None:
    """NDCG@k with binary gains and a log2(rank + 1) discount.

    An item is relevant (gain 1) if it covers at least one gold id that no
    earlier item covered, so repeating the same evidence earns nothing. The
    ideal ranking puts ``min(k, number of gold ids)`` relevant items on top.
    None if there is no gold id.
    """
    _validate_k(k)
    gold = set(gold_ids)
    if not gold:
        return None
    covered: set[str] = set()
    dcg = 0.0
    for rank, item in enumerate(retrieved[:k], start=1):
        newly_covered = (gold & set(item)) - covered
        if newly_covered:
            dcg += 1.0 / math.log2(rank + 1)
            covered |= newly_covered
    ideal_dcg = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(gold)) + 1))
    return dcg / ideal_dcg


def aggregate(
    per_question_rows: Iterable[Mapping[str, Any]],
    category_key: str = "category",
    metric_keys: Collection[str] | None = None,
) -> dict[str, Any]:
    """Mean of each metric over all rows and per category.

    Metrics are the numeric (int, float or bool) values of a row other than the
    category, or only ``metric_keys`` when given; None values are skipped, so a
    mean is over the rows where the metric is defined.

    Returns ``{"overall": {"count": n, metric: mean, ...},
    "per_category": {category: {"count": n, metric: mean, ...}, ...}}``.
    """
    rows = list(per_question_rows)
    categories = sorted({row[category_key] for row in rows if row.get(category_key) is not None})
    return {
        "overall": _mean_metrics(rows, category_key, metric_keys),
        "per_category": {
            category: _mean_metrics(
                [row for row in rows if row.get(category_key) == category], category_key, metric_keys
            )
            for category in categories
        },
    }


def _mean_metrics(
    rows: list[Mapping[str, Any]], category_key: str, metric_keys: Collection[str] | None
) -> dict[str, Any]:
    values: dict[str, list[float]] = {}
    for row in rows:
        for key, value in row.items():
            if key == category_key or (metric_keys is not None and key not in metric_keys):
                continue
            if isinstance(value, (bool, int, float)):
                values.setdefault(key, []).append(float(value))
    summary: dict[str, Any] = {"count": len(rows)}
    summary.update({key: sum(numbers) / len(numbers) for key, numbers in values.items()})
    return summary


def paired_difference(
    rows: list[Mapping[str, Any]],
    baseline_rows: list[Mapping[str, Any]],
    metric: str,
    resamples: int = 2000,
    seed: int = 0,
    groups: list[str] | None = None,
) -> dict[str, Any]:
    """How far `rows` beat `baseline_rows` on `metric`, question by question (the two lists hold
    the same questions in the same order): the mean difference, its 95% paired bootstrap interval
    (`scipy.stats.bootstrap`, percentile method, fixed seed), and how many questions each side wins.
    An interval that holds 0 says the two systems are not told apart by these questions.
    With `groups` (one label per row, e.g. its conversation): also the mean difference per group,
    which shows whether a gap holds across groups or comes from one of them."""
    from scipy.stats import bootstrap

    if len(rows) != len(baseline_rows):
        raise ValueError(f"paired rows differ in length: {len(rows)} and {len(baseline_rows)}")
    if groups is not None and len(groups) != len(rows):
        raise ValueError(f"need one group per row: {len(groups)} groups for {len(rows)} rows")
    kept = [
        (row[metric], base[metric], groups[i] if groups is not None else None)
        for i, (row, base) in enumerate(zip(rows, baseline_rows))
        if row.get(metric) is not None and base.get(metric) is not None
    ]
    differences = [float(a) - float(b) for a, b, _ in kept]
    result: dict[str, Any] = {
        "questions": len(differences),
        "better": sum(d > 0 for d in differences),
        "worse": sum(d < 0 for d in differences),
    }
    if groups is not None:
        by_group: dict[str, list[float]] = {}
        for (_, _, group), difference in zip(kept, differences):
            by_group.setdefault(group, []).append(difference)
        result["per_group"] = {group: sum(values) / len(values) for group, values in by_group.items()}
    if not differences:
        return {**result, "difference": None, "ci95": None}
    mean = sum(differences) / len(differences)
    if max(differences) == min(differences):
        return {**result, "difference": mean, "ci95": [mean, mean]}
    interval = bootstrap(
        (differences,),
        lambda x, axis: x.mean(axis=axis),
        n_resamples=resamples,
        confidence_level=0.95,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(seed),
    ).confidence_interval
    return {**result, "difference": mean, "ci95": [float(interval.low), float(interval.high)]}


def normalize_answer(text: Any) -> str:
    """Lowercase, strip punctuation and the articles a/an/the, collapse whitespace (SQuAD)."""
    lowered = str(text).lower()
    without_punctuation = "".join(
        character
        for character in lowered
        if character not in string.punctuation and not unicodedata.category(character).startswith("P")
    )
    return " ".join(_ARTICLES.sub(" ", without_punctuation).split())


def _answer_tokens(text: Any) -> list[str]:
    """Tokens of a normalised answer; CJK characters count as one token each."""
    return _CJK_CHARACTER.sub(r" \1 ", normalize_answer(text)).split()


def exact_match(prediction: Any, gold: Any) -> float:
    """1.0 if the normalised prediction equals the normalised gold answer."""
    return float(_answer_tokens(prediction) == _answer_tokens(gold))


def token_f1(prediction: Any, gold: Any) -> float:
    """SQuAD token-overlap F1 between normalised answers (1.0 if both are empty, 0.0 if only one is)."""
    prediction_tokens = _answer_tokens(prediction)
    gold_tokens = _answer_tokens(gold)
    if not prediction_tokens or not gold_tokens:
        return float(prediction_tokens == gold_tokens)
    overlap = sum((Counter(prediction_tokens) & Counter(gold_tokens)).values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(prediction_tokens)
    recall = overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def precision_recall_f1(correct: int, predicted: int, expected: int) -> dict[str, float]:
    """Micro precision correct/predicted, recall correct/expected and their harmonic mean F1 (each 1.0
    when there was nothing to find or to get wrong: no prediction is then a perfect one)."""
    precision = correct / predicted if predicted else 1.0
    recall = correct / expected if expected else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def contains_match(prediction: Any, gold: Any) -> float:
    """1.0 if the normalised gold appears in the normalised prediction or vice versa.

    Matching is on whole tokens ("art" does not match "party"); an empty side never matches.
    """
    prediction_text = " ".join(_answer_tokens(prediction))
    gold_text = " ".join(_answer_tokens(gold))
    if not prediction_text or not gold_text:
        return 0.0
    padded_prediction = f" {prediction_text} "
    padded_gold = f" {gold_text} "
    return float(padded_gold in padded_prediction or padded_prediction in padded_gold)


def extract_numbers(text: Any) -> set[float]:
    """Numbers written with digits (``"2,000"``, ``"3.5"``, ``"7th"``, years) or as English words up to ninety-nine."""
    lowered = str(text).lower()
    numbers = {float(match.replace(",", "")) for match in _NUMBER.findall(lowered)}
    for match in _NUMBER_WORD.finditer(lowered):
        if match.group("unit"):
            numbers.add(float(_UNIT_WORDS[match.group("unit")]))
        else:
            unit = match.group("unit_after_tens")
            numbers.add(float(_TENS_WORDS[match.group("tens")] + (_UNIT_WORDS[unit] if unit else 0)))
    return numbers


def numeric_match(prediction: Any, gold: Any) -> float:
    """1.0 if the gold answer and the prediction share at least one number (counts, ages, days, years).

    Returns 0.0 when the gold answer holds no number: the metric is only
    meaningful for numeric or dated answers, so restrict it to questions where
    ``extract_numbers(gold)`` is non-empty. Sharing any one number is lenient:
    "7 May 2023" matches "8 May 2023" through the year.
    """
    gold_numbers = extract_numbers(gold)
    if not gold_numbers:
        return 0.0
    return float(bool(gold_numbers & extract_numbers(prediction)))


def is_abstention(prediction: Any) -> bool:
    """True if the prediction declines to answer ("not mentioned", "no information", "unknown", ...).

    An empty prediction is not an abstention, so a broken pipeline that answers
    nothing earns no credit on adversarial (category 5) questions.
    """
    text = " ".join(str(prediction).lower().replace("\u2019", "'").split())
    return any(phrase in text for phrase in _ABSTENTION_PHRASES)


def answer_scores(prediction: Any, gold: Any, category: int) -> dict[str, float]:
    """All QA metrics for one answer.

    For adversarial questions (category 5) the gold is the misleading answer, so
    every metric is 1.0 if the prediction abstains and 0.0 otherwise, as in the
    LoCoMo evaluation.
    """
    if category == ADVERSARIAL_CATEGORY:
        abstained = float(is_abstention(prediction))
        return {
            "exact_match": abstained,
            "token_f1": abstained,
            "contains_match": abstained,
            "numeric_match": abstained,
            "abstained": abstained,
        }
    return {
        "exact_match": exact_match(prediction, gold),
        "token_f1": token_f1(prediction, gold),
        "contains_match": contains_match(prediction, gold),
        "numeric_match": numeric_match(prediction, gold),
        "abstained": float(is_abstention(prediction)),
    }
