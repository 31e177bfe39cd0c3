"""The shipped relation model's accuracy on labelled (memory, statement) pairs, overall and per
label, kind (or category) and language: beside `make fit-relation`'s held-out split of the training
pairs, a measure on pairs written apart from them (`evals/data/pairs_blind.jsonl`, all of whose
contradictions are implicit). Each pair is judged as perception judges a turn against one fact
(`pcm.perception.relation.PairJudge`); the verdict is the most probable relation."""

from __future__ import annotations

import numpy as np

from pcm.perception.relation import PairJudge, load_relation_model


def breakdown(rows: list[dict], predicted: list[str]) -> dict:
    """Accuracy overall and per label, kind and language (original pairs and added negatives apart)."""

    def accuracy(selected: list[int]) -> dict:
        return (
            {
                "accuracy": round(float(np.mean([predicted[i] == rows[i]["label"] for i in selected])), 3),
                "pairs": len(selected),
            }
            if selected
            else {"accuracy": None, "pairs": 0}
        )

    by: dict[str, dict] = {
        "all": accuracy(list(range(len(rows)))),
        "original_pairs": accuracy([i for i, r in enumerate(rows) if r["kind"] != "unrelated"]),
    }
    for field in ("label", "kind", "lang"):
        values = sorted({r[field] for r in rows})
        by[field] = {v: accuracy([i for i, r in enumerate(rows) if r[field] == v]) for v in values}
    return by


def pair_verdicts(judge: PairJudge, pairs: list[dict]) -> list[dict[str, float]]:
    """P(consistent/novel/contradiction) of each pair's statement against its memory."""
    texts = list(dict.fromkeys(t for p in pairs for t in (p["memory"], p["statement"])))
    vectors = dict(zip(texts, judge.encode(texts)))
    model = load_relation_model(judge.model_path)
    return [
        model.judge(vectors[p["memory"]][None], vectors[p["statement"]], [p["memory"]], p["statement"])[0]
        for p in pairs
    ]


def relation_accuracy(judge: PairJudge, pairs: list[dict]) -> dict:
    """`breakdown` of the most probable relation against each pair's label
    (a pair without a kind is broken down by its category, if it has one)."""
    predicted = [max(v, key=v.get) for v in pair_verdicts(judge, pairs)]
    rows = [dict(p, kind=p.get("kind") or p.get("category") or "unlabelled") for p in pairs]
    return breakdown(rows, predicted)


def report(results: dict, source: str) -> str:
    """A Markdown table of `relation_accuracy`'s results on the pairs of `source`."""
    lines = [f"# Relation model accuracy on {source}", "", "| pairs | count | accuracy |", "|---|---|---|"]
    lines.append(f"| all | {results['all']['pairs']} | {results['all']['accuracy']} |")
    for field in ("label", "lang", "kind"):
        lines += [f"| {field} {key} | {row['pairs']} | {row['accuracy']} |" for key, row in results[field].items()]
    return "\n".join(lines)
