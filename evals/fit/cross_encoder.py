"""The relation model as a fine-tuned cross-encoder, measured against the shipped head (issue 45).

MiniLM-L6 (the shipped embedding model, 22M parameters) reads memory and statement together
("[CLS] memory [SEP] statement [SEP]") and is fine-tuned end to end with a 3-way head on the mean of
its last hidden states, every transformer layer trained (the word embeddings frozen), class-balanced
cross-entropy, AdamW with a linear warm-up and decay. Same pairs, group split and added negatives as
`python -m evals fit-relation` (`evals.fit.relation_pairs`), so the held-out accuracy compares
directly with the shipped head's. `python -m evals fit-cross-encoder` reports it after each epoch
and can save the weights; it is not what ships (see the measurement log, 2026-11-28).
"""

from __future__ import annotations

import json
import logging
import random
import time
from pathlib import Path

import numpy as np

from evals.bench.relation_accuracy import breakdown
from evals.fit.relation_fit import HELD_OUT_SHARE, SEED
from evals.fit.relation_pairs import load_pairs, split_groups, with_negatives
from pcm.perception.relation import RELATIONS
from pcm.world.embeddings import default_embedding_path

logger = logging.getLogger(__name__)


def fit_cross_encoder(
    epochs: int = 3, batch: int = 16, learning_rate: float = 3e-5, out: Path | None = None, report=logger.info
) -> dict:
    """Fine-tune, score the held-out groups after each epoch; the per-epoch breakdowns."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(SEED)
    rng = random.Random(SEED)
    pairs = load_pairs()
    kept, held_out = split_groups(pairs, HELD_OUT_SHARE, SEED)
    rows = with_negatives(pairs, held_out, SEED)
    train = [r for r in rows if r["group"] in kept]
    test = [r for r in rows if r["group"] in held_out]
    path = default_embedding_path()
    tokenizer, encoder = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path)
    head = torch.nn.Linear(encoder.config.hidden_size, len(RELATIONS))
    for parameter in encoder.embeddings.parameters():
        parameter.requires_grad = False

    def logits(chunk: list[dict]):
        encoded = tokenizer(
            [r["memory"] for r in chunk],
            [r["statement"] for r in chunk],
            padding=True,
            truncation=True,
            max_length=128,
            return_tensors="pt",
        )
        hidden = encoder(**encoded).last_hidden_state
        mask = encoded["attention_mask"].unsqueeze(-1).float()
        return head((hidden * mask).sum(1) / mask.sum(1))

    trained = [p for p in (*encoder.parameters(), *head.parameters()) if p.requires_grad]
    optimiser = torch.optim.AdamW(trained, lr=learning_rate, weight_decay=0.01)
    steps = epochs * -(-len(train) // batch)
    warm_up = max(1, int(0.1 * steps))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: s / warm_up if s < warm_up else max(0.0, (steps - s) / (steps - warm_up))
    )
    index = {label: i for i, label in enumerate(RELATIONS)}
    counts = np.bincount([index[r["label"]] for r in train], minlength=len(RELATIONS))
    loss_of = torch.nn.CrossEntropyLoss(weight=torch.tensor(len(train) / (len(RELATIONS) * counts), dtype=torch.float))
    started, results = time.perf_counter(), []
    for epoch in range(epochs):
        encoder.train()
        rng.shuffle(train)
        for start in range(0, len(train), batch):
            chunk = train[start : start + batch]
            loss = loss_of(logits(chunk), torch.tensor([index[r["label"]] for r in chunk]))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trained, 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
        encoder.eval()
        with torch.inference_mode():
            predicted = [RELATIONS[i] for s in range(0, len(test), 64) for i in logits(test[s : s + 64]).argmax(1)]
        scores = breakdown(test, predicted)
        results.append({"epoch": epoch + 1, "seconds": round(time.perf_counter() - started), "held_out": scores})
        report(
            f"epoch {epoch + 1}: held-out {scores['all']['accuracy']:.3f} (en {scores['lang']['en']['accuracy']:.3f}, "
            f"zh {scores['lang']['zh']['accuracy']:.3f}, implicit {scores['kind']['implicit']['accuracy']:.3f}), "
            f"{results[-1]['seconds']} s"
        )
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        torch.save({"encoder": encoder.state_dict(), "head": head.state_dict()}, out / "cross_encoder.pt")
        (out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    return {"pairs": len(pairs), "train_pairs": len(train), "held_out_pairs": len(test), "epochs": results}
