"""Fit the surprise router on one scenario file (plus scenarios built from the relation training
pairs and turns of a chat between friends, `evals.fit.router_pairs`); it is only ever scored on
another scenario file.

Two things are fitted from the probes' measured signals:
- θ_low/θ_high per scorer: the pair of cut points on S_eff with the best 3-way accuracy (on the
  scenario file's probes);
- the router: a multinomial logistic regression over all signals, the relation model's verdicts
  included (standardised, class-balanced), saved as plain numbers so PCM needs no scikit-learn at
  run time; and the cheap router, the same over the signals that need no language model (the
  cascade's first stage).
The probes' signals are measured after replaying each history with routing off, so
what the router learns from does not depend on an earlier router's decisions.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from evals.provenance import file_digest
from pcm.config import SCORERS, PCMContext
from pcm.formulas import LEVELS, effective_surprisal
from pcm.perception.surprise import CHEAP_FEATURES, FEATURES, RELATION_FEATURES, raw_surprisal
from pcm.routing import RouterModel
from pcm.world.persistence import atomic_write_text


def scorer_s_eff(record, scorer: str, ctx: PCMContext) -> float:
    signals = record.signals
    return effective_surprisal(
        raw_surprisal(scorer, signals, ctx.hybrid_alpha), signals["retrieval_entropy"], ctx.surprise_lambda
    )


def fit_thresholds(values: list[float], expected: list[str]) -> tuple[float, float]:
    """The (θ_low, θ_high) with the best accuracy of low ≤ θ_low < medium ≤ θ_high < high."""
    points = sorted(set(values))
    cuts = [points[0] - 1e-6] + [(a + b) / 2 for a, b in zip(points, points[1:])] + [points[-1] + 1e-6]
    x = np.asarray(values)
    truth = np.asarray([LEVELS.index(e) for e in expected])
    best, best_pair = -1.0, (cuts[0], cuts[-1])
    for i, low in enumerate(cuts):
        for high in cuts[i:]:
            taken = np.where(x <= low, 0, np.where(x > high, 2, 1))
            accuracy = float((taken == truth).mean())
            if accuracy > best:
                best, best_pair = accuracy, (low, high)
    return float(best_pair[0]), float(best_pair[1])


def fit_router(
    records, features: tuple[str, ...] = FEATURES, c: float = 0.3, weights: list[float] | None = None
) -> dict:
    """Class-balanced multinomial logistic regression on standardised signals; `c` is the inverse
    L2 strength (0.3: a few dozen scenarios cannot support large coefficients). `weights` (one per
    record, default 1) multiply the class-balancing weights: how much each source of examples counts."""
    x = np.asarray([[r.signals[f] for f in features] for r in records], dtype=float)
    y = np.asarray([r.expected for r in records])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    balance = {level: len(y) / (len(set(y)) * int((y == level).sum())) for level in set(y)}
    sample_weight = np.asarray([balance[level] for level in y]) * (
        1.0 if weights is None else np.asarray(weights, float)
    )
    model = LogisticRegression(C=c, max_iter=3000)
    model.fit((x - mean) / scale, y, sample_weight=sample_weight)
    order = [list(model.classes_).index(level) for level in LEVELS]
    return {
        "features": list(features),
        "classes": list(LEVELS),
        "mean": mean.tolist(),
        "scale": scale.tolist(),
        "coef": model.coef_[order].tolist(),
        "intercept": model.intercept_[order].tolist(),
    }


def predict_router(spec: dict, records) -> list[str]:
    model = RouterModel(spec)
    out = []
    for r in records:
        probabilities = model.probabilities(r.signals)
        out.append(max(probabilities, key=probabilities.get))
    return out


#: what the full router and the cascade's cheap first stage read
ROUTER_FEATURES = (*FEATURES, *RELATION_FEATURES)
CHEAP_ROUTER_FEATURES = (*CHEAP_FEATURES, *RELATION_FEATURES)


def fit_calibration(
    records,
    ctx: PCMContext,
    source: str | Path,
    pair_records: list | None = None,
    pairs_note: dict | None = None,
    chat_records: list | None = None,
    chat_note: dict | None = None,
    file_weight: float = 1.0,
) -> dict:
    """θ per scorer on the scenario file's probes; both routers on them (each counted `file_weight`
    times) plus `pair_records` (scenarios built from the relation training pairs) and
    `chat_records` (turns of a conversation between friends, all "low"; `evals.fit.router_pairs`), if
    any. θ_high also sets how hard a correction decays and where hypothesis weights start, so it
    stays the scenario file's."""
    extra = [*(pair_records or []), *(chat_records or [])]
    everything = [*records, *extra]
    weights = [file_weight] * len(records) + [1.0] * len(extra)
    expected = [r.expected for r in records]
    return {
        "fitted_on": str(source),
        "fitted_on_sha256": file_digest(source),
        "fitted_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "scenarios": len(records),
        "file_weight": file_weight,
        "pair_scenarios": {"count": len(pair_records or []), **(pairs_note or {})},
        "chat_turns": {"count": len(chat_records or []), **(chat_note or {})},
        "settings": {"surprise_lambda": ctx.surprise_lambda, "hybrid_alpha": ctx.hybrid_alpha},
        "thresholds": {s: list(fit_thresholds([scorer_s_eff(r, s, ctx) for r in records], expected)) for s in SCORERS},
        "router": fit_router(everything, ROUTER_FEATURES, weights=weights),
        "router_cheap": fit_router(everything, CHEAP_ROUTER_FEATURES, weights=weights),
    }


def signal_contributions(train, test) -> dict[str, float]:
    """Held-out accuracy of the router with all signals, and the drop when each one is left out."""

    def accuracy(features):
        spec = fit_router(train, features)
        return float(np.mean([p == r.expected for p, r in zip(predict_router(spec, test), test)]))

    full = accuracy(ROUTER_FEATURES)
    out = {"all_signals": full}
    for feature in ROUTER_FEATURES:
        out[f"without_{feature}"] = accuracy(tuple(f for f in ROUTER_FEATURES if f != feature))
    return out


def save_calibration(calibration: dict, path: str | Path) -> None:
    atomic_write_text(Path(path), json.dumps(calibration, indent=2, ensure_ascii=False))
