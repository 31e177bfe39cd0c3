"""Fit the relation model (`pcm.perception.relation`) on `training/relation_pairs/` and choose the pair
router's thresholds on the dev scenario files.

Split: the pairs come in groups (one memory, 5–6 statements); 20% of the groups (seeded, by a hash of
the group's name, so that editing some groups moves no other across the split) are held
out for the reported accuracy, and 20% of the remaining groups are the validation split on which
each input variant's regularisation C is chosen. The variant with the best validation accuracy is
refitted on every pair and shipped. Added negatives: every statement is also paired with a memory
of another life area in the same language (same side of the split), labelled novel, so that an
unrelated memory is not read as confirmed or contradicted (the pairs, the split and the negatives:
`evals.fit.relation_pairs`).

Variants: feature blocks over the vectors of MiniLM (the embedding model), of USE multilingual v3, or of
both side by side (`Variant.encoders`; see `pcm.perception.relation`; the
`bilinear` block at each rank of `BILINEAR_RANKS`, its subspace fitted on the texts of the pairs the
head is fitted on, never on held-out ones), and,
with `--lm-pairs N`, the last-token hidden state of the shipped causal LM over a prompt holding
both texts, compared with the encoder on the same N pairs (the LM needs about 0.1 s per pair on
this 2-core machine, about 11 minutes for all pairs on top of the fit; on 2,004 pairs it scored
0.646 held out against the encoder's 0.775, so the encoder input is what ships).

Thresholds: τ_c, τ_l and τ_cue of `pcm.formulas.pair_level` maximise 3-way routing accuracy on the
dev files' probes, whose signals are measured after replaying each history with routing off (as
`evals.fit.calibration` does for the calibrated router). The thresholds without the cue path (τ_cue
off) are stored beside them for the benchmark's ablation.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from evals.bench.relation_accuracy import breakdown
from evals.bench.scenarios import load_scenarios, run_scenarios
from evals.fit.relation_pairs import load_pairs, split_groups, with_negatives
from evals.provenance import file_digest
from pcm.config import load_context
from pcm.formulas import pair_level
from pcm.perception.relation import RELATIONS, SubspaceBasis, encode_for_relation, pair_features
from pcm.services import Services
from pcm.world.persistence import atomic_write_text

logger = logging.getLogger(__name__)
BILINEAR_RANKS = (16, 24, 32)


@dataclass(frozen=True)
class Variant:
    """An input to compare: feature blocks, the rank of the `bilinear` block's subspace (0: none),
    and the sentence encoders whose vectors the blocks read (`pcm.perception.relation.ENCODERS`:
    the embedding model, MiniLM by default, and USE multilingual v3; both: side by side)."""

    blocks: tuple[str, ...]
    rank: int = 0
    encoders: tuple[str, ...] = ("embedder",)


_SHIPPED_BLOCKS = ("product", "difference", "statement", "cosine", "cues")
#: the encoder sets `--encoders` may name: MiniLM (the embedding model), USE multilingual v3, both side by side
ENCODER_SETS = {"minilm": ("embedder",), "use": ("multilingual",), "minilm+use": ("embedder", "multilingual")}


def variants_for(encoder_sets: tuple[str, ...] = ("minilm",)) -> dict[str, Variant]:
    """The inputs compared: on MiniLM (the default, and what ships) every block set and bilinear rank;
    on another encoder set the shipped blocks with and without the bilinear block at each rank."""
    variants: dict[str, Variant] = {}
    for name in encoder_sets:
        if name not in ENCODER_SETS:
            raise ValueError(f"unknown encoder set {name!r}; known: {', '.join(ENCODER_SETS)}")
        encoders, prefix = ENCODER_SETS[name], "" if name == "minilm" else f"{name}: "
        if name == "minilm":
            variants["encoder"] = Variant(("product", "difference", "cosine"))
            variants["encoder+cues"] = Variant(("product", "difference", "cosine", "cues"))
        variants[f"{prefix}encoder+statement+cues"] = Variant(_SHIPPED_BLOCKS, 0, encoders)
        for rank in BILINEAR_RANKS:
            variants[f"{prefix}encoder+statement+cues+bilinear{rank}"] = Variant(
                (*_SHIPPED_BLOCKS, "bilinear"), rank, encoders
            )
    return variants


VARIANTS = variants_for()
C_GRID = (0.001, 0.003, 0.01, 0.03)
HELD_OUT_SHARE = 0.2
SEED = 0
LM_PROMPT = (
    "Earlier the user said: {memory}\nNow the user says: {statement}\nDoes this contradict what they said earlier?"
)


def fit_basis(rows: list[dict], rank: int, vectors: dict[str, np.ndarray]) -> SubspaceBasis | None:
    """The `bilinear` block's subspace, fitted on the texts of `rows` only (None for rank 0)."""
    if not rank:
        return None
    texts = list(dict.fromkeys(t for r in rows for t in (r["memory"], r["statement"])))
    return SubspaceBasis.fit(np.stack([vectors[t] for t in texts]), rank)


def encoder_features(
    rows: list[dict], blocks: tuple[str, ...], vectors: dict[str, np.ndarray], basis: SubspaceBasis | None = None
) -> np.ndarray:
    return np.stack(
        [
            pair_features(blocks, vectors[r["memory"]], vectors[r["statement"]], r["memory"], r["statement"], basis)
            for r in rows
        ]
    )


def fit_head(x: np.ndarray, labels: list[str], c: float) -> tuple[StandardScaler, LogisticRegression]:
    scaler = StandardScaler().fit(x)
    scaler.scale_[scaler.scale_ == 0] = 1.0
    model = LogisticRegression(C=c, max_iter=3000, class_weight="balanced").fit(scaler.transform(x), labels)
    return scaler, model


def most_likely(probabilities: np.ndarray) -> list[str]:
    """Each row's most probable relation (columns in `RELATIONS` order)."""
    return [RELATIONS[i] for i in np.asarray(probabilities).argmax(axis=1)]


def lm_hidden_states(rows: list[dict], batch: int = 16) -> dict[tuple[str, str], np.ndarray]:
    """Last-token hidden state (middle and last layers, concatenated) of the shipped causal LM over
    `LM_PROMPT` for each distinct pair."""
    import torch

    from pcm.perception.language_model import CausalLMScorer

    scorer = CausalLMScorer()
    tokenizer, model = scorer.tokenizer, scorer.model
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "right"
    pairs = list(dict.fromkeys((r["memory"], r["statement"]) for r in rows))
    found = {}
    for start in range(0, len(pairs), batch):
        chunk = pairs[start : start + batch]
        encoded = tokenizer(
            [LM_PROMPT.format(memory=m, statement=s) for m, s in chunk],
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=192,
        )
        with torch.inference_mode():
            hidden = model.model(**encoded, output_hidden_states=True).hidden_states
        last = encoded["attention_mask"].sum(1) - 1
        layers = (len(hidden) // 2, len(hidden) - 1)
        for j, pair in enumerate(chunk):
            found[pair] = np.concatenate([hidden[layer][j, last[j]].float().numpy() for layer in layers])
    return found


def compare_variants(
    train: list[dict],
    validation: list[dict],
    test: list[dict],
    by_encoders: dict[tuple, dict],
    report,
    candidates: dict[str, Variant] = VARIANTS,
) -> dict:
    """Each variant: C chosen on validation, then refitted on train + validation and scored on the
    held-out test groups (`by_encoders`: each encoder set's vector of each text)."""
    results = {}
    for name, variant in candidates.items():
        blocks, vectors = variant.blocks, by_encoders[variant.encoders]
        basis = fit_basis(train, variant.rank, vectors)
        x_train, x_val = (
            encoder_features(train, blocks, vectors, basis),
            encoder_features(validation, blocks, vectors, basis),
        )
        scores, on_validation = {}, {}
        for c in C_GRID:
            scaler, model = fit_head(x_train, [r["label"] for r in train], c)
            on_validation[c] = model.predict_proba(scaler.transform(x_val))[
                :, [list(model.classes_).index(label) for label in RELATIONS]
            ]
            scores[c] = float(np.mean(np.asarray(most_likely(on_validation[c])) == [r["label"] for r in validation]))
        best_c = max(scores, key=scores.get)
        kept = train + validation
        basis = fit_basis(kept, variant.rank, vectors)
        scaler, model = fit_head(encoder_features(kept, blocks, vectors, basis), [r["label"] for r in kept], best_c)
        probabilities = model.predict_proba(scaler.transform(encoder_features(test, blocks, vectors, basis)))[
            :, [list(model.classes_).index(label) for label in RELATIONS]
        ]
        results[name] = {
            "blocks": list(blocks),
            "rank": variant.rank,
            "encoders": list(variant.encoders),
            "C": best_c,
            "validation_accuracy": round(scores[best_c], 3),
            "held_out": breakdown(test, most_likely(probabilities)),
        }
        report(
            f"{name}: C={best_c} validation {scores[best_c]:.3f}, held-out "
            f"{results[name]['held_out']['all']['accuracy']:.3f}"
        )
    return results


def compare_with_lm(
    rows: list[dict], held_out: set[str], vectors: dict[str, np.ndarray], limit: int, variant: Variant, c: float, report
) -> dict:
    """LM hidden states against the encoder `variant`, on the same `limit` pairs (a random
    subset of whole groups), held-out groups as above, C as chosen for the encoder."""
    rng = random.Random(SEED)
    groups = sorted({r["group"] for r in rows})
    rng.shuffle(groups)
    chosen, total = set(), 0
    sizes = defaultdict(int)
    for r in rows:
        sizes[r["group"]] += 1
    for group in groups:
        if total >= limit:
            break
        chosen.add(group)
        total += sizes[group]
    subset = [r for r in rows if r["group"] in chosen]
    started = time.perf_counter()
    hidden = lm_hidden_states(subset)
    seconds = time.perf_counter() - started
    train = [r for r in subset if r["group"] not in held_out]
    test = [r for r in subset if r["group"] in held_out]
    out = {"pairs": len(subset), "held_out_pairs": len(test), "lm_seconds_per_pair": round(seconds / len(hidden), 3)}
    basis = fit_basis(train, variant.rank, vectors)
    for name, featurise in (
        ("lm-hidden", lambda rs: np.stack([hidden[(r["memory"], r["statement"])] for r in rs])),
        (
            "lm-hidden+cues",
            lambda rs: np.hstack(
                [
                    np.stack([hidden[(r["memory"], r["statement"])] for r in rs]),
                    encoder_features(rs, ("cues",), vectors),
                ]
            ),
        ),
        ("encoder-same-pairs", lambda rs: encoder_features(rs, variant.blocks, vectors, basis)),
    ):
        scaler, model = fit_head(featurise(train), [r["label"] for r in train], c)
        predicted = model.predict(scaler.transform(featurise(test))).tolist()
        out[name] = breakdown(test, predicted)
        report(f"{name} on {len(subset)} pairs ({len(test)} held out): {out[name]['all']['accuracy']:.3f}")
    return out


def choose_thresholds(records: list, cue_path: bool = True) -> dict:
    """(τ_c, τ_l, τ_cue) with the best routing accuracy of `pair_level` on the probes' signals
    (ties: the larger thresholds, the cautious ones; τ_cue 1.01 is the cue path switched off,
    the only value tried without `cue_path`)."""
    grid = np.round(np.arange(0.30, 0.951, 0.025), 3)
    signals = [
        (
            r.signals.get("relation_contradiction", 0.0),
            r.signals.get("relation_consistent", 0.0),
            r.signals.get("cue_router_high", 0.0),
            r.expected,
        )
        for r in records
    ]
    best = None
    for tau_c in grid:
        for tau_l in grid:
            for tau_cue in [*grid, 1.01] if cue_path else [1.01]:
                hits = sum(pair_level(c, k, q, tau_c, tau_l, tau_cue) == expected for c, k, q, expected in signals)
                key = (hits, tau_cue, tau_c)
                if best is None or key > best[0]:
                    best = (key, float(tau_c), float(tau_l), float(tau_cue))
    (hits, _, _), tau_c, tau_l, tau_cue = best
    return {
        "contradiction": tau_c,
        "consistent": tau_l,
        "cue": tau_cue,
        "dev_accuracy": round(hits / len(records), 3),
        "dev_probes": len(records),
    }


def fit_relation(
    out: Path,
    dev_files: list[Path],
    lm_pairs: int,
    report=logger.info,
    workers: int = 1,
    encoder_sets: tuple[str, ...] = ("minilm",),
) -> dict:
    started = time.perf_counter()
    candidates = variants_for(encoder_sets)
    pairs = load_pairs()
    kept_groups, held_out = split_groups(pairs, HELD_OUT_SHARE, SEED)
    train_groups, validation_groups = split_groups(
        [r for r in pairs if r["group"] in kept_groups], HELD_OUT_SHARE, SEED + 1
    )
    rows = with_negatives(pairs, held_out, SEED)
    ctx = load_context(router="off")
    services = Services(ctx)
    texts = list(dict.fromkeys(t for r in rows for t in (r["memory"], r["statement"])))
    sources = {"embedder": lambda: services.embedder, "multilingual": lambda: services.multilingual_encoder}
    by_encoders = {
        encoders: dict(zip(texts, encode_for_relation(list(encoders), sources, texts)))
        for encoders in {variant.encoders for variant in candidates.values()}
    }
    report(
        f"{len(pairs)} pairs in {len({r['group'] for r in pairs})} groups (+{len(rows) - len(pairs)} unrelated "
        f"negatives); held out {len(held_out)} groups; encoded {len(texts)} texts"
    )
    train = [r for r in rows if r["group"] in train_groups]
    validation = [r for r in rows if r["group"] in validation_groups]
    test = [r for r in rows if r["group"] in held_out]
    variants = compare_variants(train, validation, test, by_encoders, report, candidates)
    chosen = max(variants, key=lambda v: variants[v]["validation_accuracy"])
    vectors = by_encoders[candidates[chosen].encoders]
    report(f"shipped variant: {chosen} (best validation accuracy)")
    lm = (
        compare_with_lm(rows, held_out, vectors, lm_pairs, candidates[chosen], variants[chosen]["C"], report)
        if lm_pairs
        else None
    )
    blocks = candidates[chosen].blocks
    basis = fit_basis(rows, candidates[chosen].rank, vectors)
    scaler, model = fit_head(
        encoder_features(rows, blocks, vectors, basis), [r["label"] for r in rows], variants[chosen]["C"]
    )
    spec = {
        "encoder": " + ".join(
            sources[name]().model_path.split("/site-packages/")[-1] for name in candidates[chosen].encoders
        ),
        "encoders": list(candidates[chosen].encoders),
        "dimension": sum(sources[name]().dimension for name in candidates[chosen].encoders),
        "features": list(blocks),
        "labels": [str(c) for c in model.classes_],
        "mean": scaler.mean_.tolist(),
        "scale": scaler.scale_.tolist(),
        "coef": model.coef_.tolist(),
        "intercept": model.intercept_.tolist(),
        **({"basis": basis.to_spec()} if basis is not None else {}),
        "C": variants[chosen]["C"],
        "fitted_on": {
            "pairs": len(pairs),
            "with_negatives": len(rows),
            "split": f"groups, {HELD_OUT_SHARE:.0%} held out (the first by a hash of the group name, seed "
            f"{SEED}); validation {HELD_OUT_SHARE:.0%} of the rest (seed {SEED + 1}); shipped head "
            f"refitted on all pairs",
        },
        "variants": variants,
        "lm_comparison": lm,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    atomic_write_text(out, json.dumps(spec))
    records = []
    replay = load_context(router="off", relation_model_file=str(out))
    for file in dev_files:
        records.extend(run_scenarios(load_scenarios(file), replay, services, progress=False, workers=workers))
    tuned_on = {"fitted_on": [str(f) for f in dev_files], "fitted_on_sha256": [file_digest(f) for f in dev_files]}
    # the cue path reads the calibrated cheap router (`cue_router_high`): these thresholds hold for
    # that calibration file only, so a recalibration is followed by a refit (see the Makefile)
    cue_router = {"cue_router_calibration_sha256": file_digest(replay.calibration_path)}
    spec["thresholds"] = {**choose_thresholds(records), **tuned_on, **cue_router}
    spec["thresholds_without_cue_path"] = {**choose_thresholds(records, cue_path=False), **tuned_on}
    spec["fit_seconds"] = round(time.perf_counter() - started, 1)
    atomic_write_text(out, json.dumps(spec))
    for key in ("thresholds", "thresholds_without_cue_path"):
        report(
            f"{key} on {len(records)} dev probes: "
            f"{json.dumps({k: v for k, v in spec[key].items() if not k.startswith('fitted_on')})}"
        )
    report(f"wrote {out} in {spec['fit_seconds']} s")
    return spec
