"""Fit the relation model (`pcm.perception.relation`) on `training/relation_pairs/` and choose the pair
router's thresholds on the dev scenario files.

Split: the pairs come in groups (one memory, 5–6 statements); 20% of the groups (seeded, by a hash of
the group's name, so that editing some groups moves no other across the split) are held
out for the reported accuracy, and 20% of the remaining groups are the validation split on which
each input variant's regularisation C is chosen. The variant with the best validation accuracy is
refitted on every pair and shipped. Added negatives: every statement is also paired with a memory
of another life area in the same language (same side of the split), labelled novel, so that an
unrelated memory is not read as confirmed or contradicted.

Variants: feature blocks over the shipped encoder's vectors (see `pcm.perception.relation`; the
`bilinear` block at each rank of `BILINEAR_RANKS`, its subspace fitted on the texts of the pairs the
head is fitted on, never on held-out ones), and,
with `--lm-pairs N`, the last-token hidden state of the shipped causal LM over a prompt holding
both texts, compared with the encoder on the same N pairs (the LM needs about 0.1 s per pair on
this 2-core machine, about 11 minutes for all pairs on top of the fit; on 2,004 pairs it scored
0.646 held out against the encoder's 0.775, so the encoder input is what ships).

With `--cross-encoder-epochs N`, also the shipped encoder fine-tuned as a cross-encoder on the
training groups, scored on the same held-out groups after each epoch (about 3.5 minutes an epoch
here), alone and with its probabilities averaged with the chosen head's; a measured comparison,
nothing of it is shipped. With `--cross-encoder-part-epochs N`, the part that is shipped: a
low-rank update of the encoder read as a cross-encoder (`pcm.perception.cross_encoder`), fitted
on the training groups, its epoch and its weight in the mixture with the head chosen on the
validation groups, then scored once on the held-out groups (`fit_cross_encoder`).

Thresholds: τ_c, τ_l and τ_cue of `pcm.formulas.pair_level` maximise 3-way routing accuracy on the
dev files' probes, whose signals are measured after replaying each history with routing off (as
`evals.calibration` does for the calibrated router). The thresholds without the cue path (τ_cue
off) are stored beside them for the benchmark's ablation.
"""

from __future__ import annotations

import hashlib
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

from evals.calibration import file_digest
from pcm.formulas import mix, pair_level
from pcm.perception.relation import RELATIONS, SubspaceBasis, pair_features
from pcm.world.knowledge_graph import atomic_write_text

logger = logging.getLogger(__name__)
TRAINING_DIR = Path(__file__).resolve().parents[1] / "training" / "relation_pairs"
BILINEAR_RANKS = (16, 24, 32)


@dataclass(frozen=True)
class Variant:
    """An input to compare: feature blocks, and the rank of the `bilinear` block's subspace (0: none)."""
    blocks: tuple[str, ...]
    rank: int = 0


_SHIPPED_BLOCKS = ("product", "difference", "statement", "cosine", "cues")
VARIANTS: dict[str, Variant] = {
    "encoder": Variant(("product", "difference", "cosine")),
    "encoder+cues": Variant(("product", "difference", "cosine", "cues")),
    "encoder+statement+cues": Variant(_SHIPPED_BLOCKS),
    **{f"encoder+statement+cues+bilinear{rank}": Variant((*_SHIPPED_BLOCKS, "bilinear"), rank)
       for rank in BILINEAR_RANKS},
}
C_GRID = (0.001, 0.003, 0.01, 0.03)
HELD_OUT_SHARE = 0.2
SEED = 0
LM_PROMPT = "Earlier the user said: {memory}\nNow the user says: {statement}\nDoes this contradict what they said earlier?"


def load_pairs(folder: Path = TRAINING_DIR) -> list[dict]:
    rows = [json.loads(line) for file in sorted(folder.glob("*.jsonl"))
            for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        if row.get("label") not in RELATIONS:
            raise ValueError(f"pair {row.get('id')}: unknown label {row.get('label')!r}")
    return rows


def stable_key(seed: int, *parts: str) -> bytes:
    """A seeded pseudo-random sort key that depends only on `parts`. A draw ordered by it keeps what
    it drew when other items join or leave the pool (a seeded shuffle redraws everything), so an
    edit to the training pairs changes the fitted models only where it touches them."""
    return hashlib.sha256("\x1f".join((str(seed), *parts)).encode("utf-8")).digest()


def stable_number(seed: int, *parts: str) -> int:
    """`stable_key` as an integer in [0, 2⁶⁴): a seeded draw (a fraction, a fold) from `parts` alone."""
    return int.from_bytes(stable_key(seed, *parts)[:8], "big")


def split_groups(rows: list[dict], share: float, seed: int) -> tuple[set[str], set[str]]:
    """(kept, held-out) group names: `share` of the groups, the first by `stable_key`."""
    groups = sorted({r["group"] for r in rows}, key=lambda group: stable_key(seed, group))
    cut = int(len(groups) * share)
    return set(groups[cut:]), set(groups[:cut])


def with_negatives(rows: list[dict], held_out: set[str], seed: int) -> list[dict]:
    """The pairs plus, for each, its statement against another area's memory (same language and
    side of the split, the first by `stable_key`), labelled novel (kind `unrelated`)."""
    memories = {r["group"]: (r["memory"], r["area"], r["lang"]) for r in rows}
    negatives = []
    for r in rows:
        side = r["group"] in held_out
        candidates = [g for g, (_, area, lang) in memories.items()
                      if area != r["area"] and lang == r["lang"] and (g in held_out) == side]
        memory = memories[min(candidates, key=lambda group: stable_key(seed, r["id"], group))][0]
        negatives.append(dict(r, id=f"{r['id']}-unrelated", memory=memory, label="novel", kind="unrelated"))
    return rows + negatives


def fit_basis(rows: list[dict], rank: int, vectors: dict[str, np.ndarray]) -> SubspaceBasis | None:
    """The `bilinear` block's subspace, fitted on the texts of `rows` only (None for rank 0)."""
    if not rank:
        return None
    texts = list(dict.fromkeys(t for r in rows for t in (r["memory"], r["statement"])))
    return SubspaceBasis.fit(np.stack([vectors[t] for t in texts]), rank)


def encoder_features(rows: list[dict], blocks: tuple[str, ...], vectors: dict[str, np.ndarray],
                     basis: SubspaceBasis | None = None) -> np.ndarray:
    return np.stack([pair_features(blocks, vectors[r["memory"]], vectors[r["statement"]], r["memory"],
                                   r["statement"], basis) for r in rows])


def fit_head(x: np.ndarray, labels: list[str], c: float) -> tuple[StandardScaler, LogisticRegression]:
    scaler = StandardScaler().fit(x)
    scaler.scale_[scaler.scale_ == 0] = 1.0
    model = LogisticRegression(C=c, max_iter=3000, class_weight="balanced").fit(scaler.transform(x), labels)
    return scaler, model


def most_likely(probabilities: np.ndarray) -> list[str]:
    """Each row's most probable relation (columns in `RELATIONS` order)."""
    return [RELATIONS[i] for i in np.asarray(probabilities).argmax(axis=1)]


def breakdown(rows: list[dict], predicted: list[str]) -> dict:
    """Accuracy overall and per label, kind and language (original pairs and added negatives apart)."""
    def accuracy(selected: list[int]) -> dict:
        return {"accuracy": round(float(np.mean([predicted[i] == rows[i]["label"] for i in selected])), 3),
                "pairs": len(selected)} if selected else {"accuracy": None, "pairs": 0}
    by: dict[str, dict] = {"all": accuracy(list(range(len(rows)))),
                           "original_pairs": accuracy([i for i, r in enumerate(rows) if r["kind"] != "unrelated"])}
    for field in ("label", "kind", "lang"):
        values = sorted({r[field] for r in rows})
        by[field] = {v: accuracy([i for i, r in enumerate(rows) if r[field] == v]) for v in values}
    return by


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
        chunk = pairs[start:start + batch]
        encoded = tokenizer([LM_PROMPT.format(memory=m, statement=s) for m, s in chunk], return_tensors="pt",
                            padding=True, truncation=True, max_length=192)
        with torch.inference_mode():
            hidden = model.model(**encoded, output_hidden_states=True).hidden_states
        last = encoded["attention_mask"].sum(1) - 1
        layers = (len(hidden) // 2, len(hidden) - 1)
        for j, pair in enumerate(chunk):
            found[pair] = np.concatenate([hidden[layer][j, last[j]].float().numpy() for layer in layers])
    return found


def compare_variants(train: list[dict], validation: list[dict], test: list[dict], vectors: dict[str, np.ndarray],
                     report) -> tuple[dict, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Each encoder variant: C chosen on validation, then refitted on train + validation and
    scored on the held-out test groups. Returns the scores, each variant's P(relation) of the
    test rows (that refit) and of the validation rows (the fit on train at the chosen C); one row
    each, columns in `RELATIONS` order."""
    results, probabilities, validation_probabilities = {}, {}, {}
    for name, variant in VARIANTS.items():
        blocks, basis = variant.blocks, fit_basis(train, variant.rank, vectors)
        x_train, x_val = encoder_features(train, blocks, vectors, basis), encoder_features(validation, blocks, vectors,
                                                                                             basis)
        scores, on_validation = {}, {}
        for c in C_GRID:
            scaler, model = fit_head(x_train, [r["label"] for r in train], c)
            on_validation[c] = model.predict_proba(scaler.transform(x_val))[
                :, [list(model.classes_).index(label) for label in RELATIONS]]
            scores[c] = float(np.mean(np.asarray(most_likely(on_validation[c])) == [r["label"] for r in validation]))
        best_c = max(scores, key=scores.get)
        validation_probabilities[name] = on_validation[best_c]
        kept = train + validation
        basis = fit_basis(kept, variant.rank, vectors)
        scaler, model = fit_head(encoder_features(kept, blocks, vectors, basis), [r["label"] for r in kept], best_c)
        probabilities[name] = model.predict_proba(scaler.transform(encoder_features(test, blocks, vectors, basis)))[
            :, [list(model.classes_).index(label) for label in RELATIONS]]
        results[name] = {"blocks": list(blocks), "rank": variant.rank, "C": best_c,
                         "validation_accuracy": round(scores[best_c], 3),
                         "held_out": breakdown(test, most_likely(probabilities[name]))}
        report(f"{name}: C={best_c} validation {scores[best_c]:.3f}, held-out "
               f"{results[name]['held_out']['all']['accuracy']:.3f}")
    return results, probabilities, validation_probabilities


def compare_with_lm(rows: list[dict], held_out: set[str], vectors: dict[str, np.ndarray], limit: int,
                    variant: Variant, c: float, report) -> dict:
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
    for name, featurise in (("lm-hidden", lambda rs: np.stack([hidden[(r["memory"], r["statement"])] for r in rs])),
                            ("lm-hidden+cues", lambda rs: np.hstack([
                                np.stack([hidden[(r["memory"], r["statement"])] for r in rs]),
                                encoder_features(rs, ("cues",), vectors)])),
                            ("encoder-same-pairs", lambda rs: encoder_features(rs, variant.blocks, vectors, basis))):
        scaler, model = fit_head(featurise(train), [r["label"] for r in train], c)
        predicted = model.predict(scaler.transform(featurise(test))).tolist()
        out[name] = breakdown(test, predicted)
        report(f"{name} on {len(subset)} pairs ({len(test)} held out): {out[name]['all']['accuracy']:.3f}")
    return out


def train_one_epoch(logits, order: list[dict], optimiser, rng: random.Random, batch: int) -> None:
    """One pass of class-balanced cross-entropy over `order` (shuffled in place by `rng`), in
    batches; `logits(rows)` gives the model's logits over `RELATIONS` for a batch of pairs. The
    class weights, n / (3 · n_label), come from `order` itself."""
    import torch

    counts = {label: sum(r["label"] == label for r in order) for label in RELATIONS}
    balance = torch.tensor([len(order) / (len(RELATIONS) * max(1, counts[label])) for label in RELATIONS])
    rng.shuffle(order)
    for start in range(0, len(order), batch):
        rows = order[start:start + batch]
        target = torch.tensor([RELATIONS.index(r["label"]) for r in rows])
        loss = torch.nn.functional.cross_entropy(logits(rows), target, weight=balance)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()


def compare_with_cross_encoder(train: list[dict], test: list[dict], encoder_path: str, epochs: int, report,
                               batch: int = 32, learning_rate: float = 3e-5, max_length: int = 96,
                               head_probabilities: np.ndarray | None = None) -> dict:
    """The shipped encoder fine-tuned as a cross-encoder ("memory [SEP] statement", mean-pooled, a
    linear head, class-balanced cross-entropy, AdamW) on `train`, scored on the held-out `test`
    groups after each epoch; with the vector head's P(relation) of the `test` rows
    (`head_probabilities`, columns in `RELATIONS` order), the mean of the two models' probabilities
    is scored too. A measured comparison only: nothing it trains is shipped."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(SEED)
    rng = random.Random(SEED)
    tokenizer, encoder = AutoTokenizer.from_pretrained(encoder_path), AutoModel.from_pretrained(encoder_path)
    head = torch.nn.Linear(encoder.config.hidden_size, len(RELATIONS))
    optimiser = torch.optim.AdamW([*encoder.parameters(), *head.parameters()], lr=learning_rate, weight_decay=0.01)

    def logits(rows: list[dict]):
        encoded = tokenizer([r["memory"] for r in rows], [r["statement"] for r in rows], padding=True,
                            truncation=True, max_length=max_length, return_tensors="pt")
        mask = encoded["attention_mask"].unsqueeze(-1).float()
        return head((encoder(**encoded).last_hidden_state * mask).sum(1) / mask.sum(1))

    started, order, per_epoch = time.perf_counter(), list(train), []
    for epoch in range(epochs):
        encoder.train()
        train_one_epoch(logits, order, optimiser, rng, batch)
        encoder.eval()
        with torch.inference_mode():
            probabilities = torch.cat([torch.softmax(logits(test[start:start + 64]), dim=-1)
                                       for start in range(0, len(test), 64)]).numpy()
        per_epoch.append({"epoch": epoch + 1, "seconds": round(time.perf_counter() - started, 1),
                          "held_out": breakdown(test, most_likely(probabilities))})
        scores = per_epoch[-1]["held_out"]
        report(f"cross-encoder epoch {epoch + 1}: held-out {scores['all']['accuracy']:.3f}, original pairs "
               f"{scores['original_pairs']['accuracy']:.3f}, contradictions "
               f"{scores['label'].get('contradiction', {}).get('accuracy')} ({per_epoch[-1]['seconds']} s)")
        if head_probabilities is not None:
            mean_scores = per_epoch[-1]["held_out_mean_with_head"] = breakdown(
                test, most_likely((probabilities + head_probabilities) / 2))
            report(f"cross-encoder epoch {epoch + 1} averaged with the head: held-out "
                   f"{mean_scores['all']['accuracy']:.3f}, original pairs {mean_scores['original_pairs']['accuracy']:.3f}")
    return {"recipe": {"batch": batch, "learning_rate": learning_rate, "max_length": max_length, "epochs": epochs,
                       "loss": "class-balanced cross-entropy", "pooling": "mean"},
            "train_pairs": len(train), "held_out_pairs": len(test), "per_epoch": per_epoch}


MIXTURE_WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)


def fit_cross_encoder(train: list[dict], validation: list[dict], test: list[dict], head_validation: np.ndarray,
                      head_test: np.ndarray, encoder_path: str, epochs: int, report, batch: int = 32,
                      learning_rate: float = 1e-3, rank: int = 8) -> dict:
    """The shipped cross-encoder part (`pcm.perception.cross_encoder`): low-rank updates and head
    fitted on `train` (class-balanced cross-entropy, AdamW). After each epoch, each weight ω of
    `MIXTURE_WEIGHTS` in P = (1 − ω)·P_head + ω·P_cross is scored on the validation groups (the
    head's P from its fit on train); the (epoch, ω) with the best validation accuracy is kept
    (ties: the smaller ω, then the earlier epoch) and scored once on the held-out groups. Returns
    the kept part's spec (`weight` ω, 0 when the cross-encoder does not help on validation) and the
    per-epoch scores."""
    import torch

    from pcm.perception.cross_encoder import PairCrossEncoder

    rng = random.Random(SEED)
    model = PairCrossEncoder(encoder_path, RELATIONS, rank=rank, seed=SEED)
    optimiser = torch.optim.AdamW(model.trainable_parameters(), lr=learning_rate, weight_decay=0.01)
    validation_labels = [r["label"] for r in validation]

    def cross_probabilities(rows: list[dict]) -> np.ndarray:
        return model.probabilities([r["memory"] for r in rows], [r["statement"] for r in rows])

    def accuracy(probabilities: np.ndarray) -> float:
        return round(float(np.mean(np.asarray(most_likely(probabilities)) == validation_labels)), 4)

    started, order, per_epoch, best = time.perf_counter(), list(train), [], None
    head_score = accuracy(head_validation)
    for epoch in range(1, epochs + 1):
        model.train()
        train_one_epoch(lambda rows: model.logits([r["memory"] for r in rows], [r["statement"] for r in rows]), order,
                        optimiser, rng, batch)
        on_validation = cross_probabilities(validation)
        scores = {w: accuracy(mix(head_validation, on_validation, w)) for w in MIXTURE_WEIGHTS}
        per_epoch.append({"epoch": epoch, "seconds": round(time.perf_counter() - started, 1),
                          "validation_accuracy_by_weight": {str(w): a for w, a in scores.items()}})
        report(f"cross-encoder part, epoch {epoch}: validation accuracy by weight "
               f"{json.dumps(per_epoch[-1]['validation_accuracy_by_weight'])} (head alone {head_score}; "
               f"{per_epoch[-1]['seconds']} s)")
        weight = max(MIXTURE_WEIGHTS, key=lambda w: (scores[w], -w))
        if best is None or scores[weight] > best["validation_accuracy"]:
            best = {"epoch": epoch, "weight": weight, "validation_accuracy": scores[weight], "spec": model.to_spec(),
                    "test": cross_probabilities(test)}
    held_out = breakdown(test, most_likely(mix(head_test, best["test"], best["weight"])))
    report(f"cross-encoder part kept: epoch {best['epoch']}, weight {best['weight']} (validation "
           f"{best['validation_accuracy']}); held-out {held_out['all']['accuracy']:.3f}, original pairs "
           f"{held_out['original_pairs']['accuracy']:.3f}")
    return {**best["spec"], "weight": best["weight"],
            "fit": {"epoch": best["epoch"], "validation_accuracy": best["validation_accuracy"],
                    "head_validation_accuracy": head_score, "held_out_with_head": held_out,
                    "recipe": {"batch": batch, "learning_rate": learning_rate, "epochs": epochs,
                               "loss": "class-balanced cross-entropy", "pooling": "mean",
                               "fitted_on": "the training groups only (not validation, not held out)"},
                    "per_epoch": per_epoch}}


def choose_thresholds(records: list, cue_path: bool = True) -> dict:
    """(τ_c, τ_l, τ_cue) with the best routing accuracy of `pair_level` on the probes' signals
    (ties: the larger thresholds, the cautious ones; τ_cue 1.01 is the cue path switched off,
    the only value tried without `cue_path`)."""
    grid = np.round(np.arange(0.30, 0.951, 0.025), 3)
    signals = [(r.signals.get("relation_contradiction", 0.0), r.signals.get("relation_consistent", 0.0),
                r.signals.get("cue_router_high", 0.0), r.expected) for r in records]
    best = None
    for tau_c in grid:
        for tau_l in grid:
            for tau_cue in [*grid, 1.01] if cue_path else [1.01]:
                hits = sum(pair_level(c, k, q, tau_c, tau_l, tau_cue) == expected for c, k, q, expected in signals)
                key = (hits, tau_cue, tau_c)
                if best is None or key > best[0]:
                    best = (key, float(tau_c), float(tau_l), float(tau_cue))
    (hits, _, _), tau_c, tau_l, tau_cue = best
    return {"contradiction": tau_c, "consistent": tau_l, "cue": tau_cue, "dev_accuracy": round(hits / len(records), 3),
            "dev_probes": len(records)}


def fit_relation(out: Path, dev_files: list[Path], lm_pairs: int, report=print, cross_encoder_epochs: int = 0,
                 cross_encoder_part_epochs: int = 0) -> dict:
    from evals.scenarios import load_scenarios, run_scenarios
    from pcm.config import load_context
    from pcm.services import Services

    started = time.perf_counter()
    pairs = load_pairs()
    kept_groups, held_out = split_groups(pairs, HELD_OUT_SHARE, SEED)
    train_groups, validation_groups = split_groups([r for r in pairs if r["group"] in kept_groups],
                                                   HELD_OUT_SHARE, SEED + 1)
    rows = with_negatives(pairs, held_out, SEED)
    ctx = load_context(router="off")
    services = Services(ctx)
    texts = list(dict.fromkeys(t for r in rows for t in (r["memory"], r["statement"])))
    vectors = dict(zip(texts, services.embedder.encode(texts)))
    report(f"{len(pairs)} pairs in {len({r['group'] for r in pairs})} groups (+{len(rows) - len(pairs)} unrelated "
           f"negatives); held out {len(held_out)} groups; encoded {len(texts)} texts")
    train = [r for r in rows if r["group"] in train_groups]
    validation = [r for r in rows if r["group"] in validation_groups]
    test = [r for r in rows if r["group"] in held_out]
    variants, held_out_probabilities, validation_probabilities = compare_variants(train, validation, test, vectors,
                                                                                  report)
    chosen = max(variants, key=lambda v: variants[v]["validation_accuracy"])
    report(f"shipped variant: {chosen} (best validation accuracy)")
    lm = (compare_with_lm(rows, held_out, vectors, lm_pairs, VARIANTS[chosen], variants[chosen]["C"], report)
          if lm_pairs else None)
    cross = (compare_with_cross_encoder(train + validation, test, services.embedder.model_path, cross_encoder_epochs,
                                        report, head_probabilities=held_out_probabilities[chosen])
             if cross_encoder_epochs else None)
    cross_part = (fit_cross_encoder(train, validation, test, validation_probabilities[chosen],
                                    held_out_probabilities[chosen], services.embedder.model_path,
                                    cross_encoder_part_epochs, report)
                  if cross_encoder_part_epochs else None)
    blocks = VARIANTS[chosen].blocks
    basis = fit_basis(rows, VARIANTS[chosen].rank, vectors)
    scaler, model = fit_head(encoder_features(rows, blocks, vectors, basis), [r["label"] for r in rows],
                             variants[chosen]["C"])
    spec = {
        "encoder": services.embedder.model_path.split("/site-packages/")[-1],
        "dimension": services.embedder.dimension,
        "features": list(blocks), "labels": [str(c) for c in model.classes_],
        "mean": scaler.mean_.tolist(), "scale": scaler.scale_.tolist(),
        "coef": model.coef_.tolist(), "intercept": model.intercept_.tolist(),
        **({"basis": basis.to_spec()} if basis is not None else {}),
        "C": variants[chosen]["C"],
        "fitted_on": {"pairs": len(pairs), "with_negatives": len(rows),
                      "split": f"groups, {HELD_OUT_SHARE:.0%} held out (the first by a hash of the group name, seed "
                               f"{SEED}); validation {HELD_OUT_SHARE:.0%} of the rest (seed {SEED + 1}); shipped head "
                               f"refitted on all pairs"},
        "variants": variants, "lm_comparison": lm, "cross_encoder_comparison": cross,
        **({} if cross_part is None else {"cross_encoder": cross_part} if cross_part["weight"]
           else {"cross_encoder_not_kept": cross_part["fit"]}),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    atomic_write_text(out, json.dumps(spec))
    records = []
    replay = load_context(router="off", relation_model_file=str(out))
    for file in dev_files:
        records.extend(run_scenarios(load_scenarios(file), replay, services, progress=False))
    tuned_on = {"fitted_on": [str(f) for f in dev_files], "fitted_on_sha256": [file_digest(f) for f in dev_files]}
    # the cue path reads the calibrated cheap router (`cue_router_high`): these thresholds hold for
    # that calibration file only, so a recalibration is followed by a refit (see the Makefile)
    cue_router = {"cue_router_calibration_sha256": file_digest(replay.calibration_path)}
    spec["thresholds"] = {**choose_thresholds(records), **tuned_on, **cue_router}
    spec["thresholds_without_cue_path"] = {**choose_thresholds(records, cue_path=False), **tuned_on}
    spec["fit_seconds"] = round(time.perf_counter() - started, 1)
    atomic_write_text(out, json.dumps(spec))
    for key in ("thresholds", "thresholds_without_cue_path"):
        report(f"{key} on {len(records)} dev probes: "
               f"{json.dumps({k: v for k, v in spec[key].items() if not k.startswith('fitted_on')})}")
    report(f"wrote {out} in {spec['fit_seconds']} s")
    return spec

