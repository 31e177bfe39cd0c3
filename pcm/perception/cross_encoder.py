"""The relation model's cross-encoder part: the shipped sentence encoder reading memory and
statement together ("memory [SEP] statement"), so that its attention can pair what the memory
is about with what the statement says, which vectors encoded apart cannot.

Only a low-rank update of each layer's attention and feed-forward projections (W ← W + s·B·A,
rank r) and a linear head over the mean-pooled tokens are fitted, so what ships is a few hundred thousand
plain numbers in the relation model's JSON file beside the vector head, not a copy of the
encoder. `python -m evals fit-relation` fits it (see `evals.relation_fit`); `RelationModel`
averages its P(relation) with the vector head's, with the weight chosen on validation pairs.
torch is imported only when a cross-encoder is built.
"""

from __future__ import annotations

import logging

import numpy as np

logger = logging.getLogger(__name__)

LOW_RANK_TARGETS = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
                    "intermediate.dense", "output.dense")


def _low_rank_linear(base, rank: int, scaling: float):
    import torch

    class LowRankLinear(torch.nn.Module):
        """`base(x) + scaling · (x·Aᵀ)·Bᵀ`, the base weights frozen; B starts at 0, so the update starts at 0."""

        def __init__(self):
            super().__init__()
            self.base = base
            self.a = torch.nn.Parameter(torch.randn(rank, base.in_features) / base.in_features ** 0.5)
            self.b = torch.nn.Parameter(torch.zeros(base.out_features, rank))
            self.scaling = scaling

        def forward(self, x):
            return self.base(x) + (x @ self.a.T @ self.b.T) * self.scaling

    return LowRankLinear()


class PairCrossEncoder:
    """The encoder at `encoder_path` with low-rank updates on `LOW_RANK_TARGETS` of every layer and
    a linear head over mean-pooled tokens, giving logits over `labels`."""

    def __init__(self, encoder_path: str, labels: list[str] | tuple[str, ...], rank: int = 8, scaling: float = 2.0,
                 max_length: int = 96, seed: int = 0):
        import torch
        from transformers import AutoModel, AutoTokenizer

        if rank < 1:
            raise ValueError(f"the cross-encoder's update rank must be at least 1, got {rank}")
        torch.manual_seed(seed)
        self.labels, self.rank, self.scaling, self.max_length = list(labels), rank, scaling, max_length
        self.tokenizer = AutoTokenizer.from_pretrained(encoder_path)
        self.encoder = AutoModel.from_pretrained(encoder_path)
        for parameter in self.encoder.parameters():
            parameter.requires_grad_(False)
        self.updates = {}
        for name, module in list(self.encoder.named_modules()):
            if any(name.endswith(target) for target in LOW_RANK_TARGETS) and isinstance(module, torch.nn.Linear):
                parent_name, _, child = name.rpartition(".")
                wrapped = _low_rank_linear(module, rank, scaling)
                setattr(self.encoder.get_submodule(parent_name), child, wrapped)
                self.updates[name] = wrapped
        if not self.updates:
            raise ValueError(f"no layer of {encoder_path} matches {LOW_RANK_TARGETS}")
        self.head = torch.nn.Linear(self.encoder.config.hidden_size, len(self.labels))
        self.encoder.eval()

    def trainable_parameters(self) -> list:
        return [p for update in self.updates.values() for p in (update.a, update.b)] + list(self.head.parameters())

    def train(self, mode: bool = True) -> None:
        self.encoder.train(mode)

    def logits(self, memories: list[str], statements: list[str]):
        encoded = self.tokenizer(memories, statements, padding=True, truncation=True, max_length=self.max_length,
                                 return_tensors="pt")
        mask = encoded["attention_mask"].unsqueeze(-1).float()
        return self.head((self.encoder(**encoded).last_hidden_state * mask).sum(1) / mask.sum(1))

    def probabilities(self, memories: list[str], statements: list[str], batch: int = 64) -> np.ndarray:
        """P(label) per pair (columns in `labels` order), the encoder in evaluation mode."""
        import torch

        self.encoder.eval()
        if not memories:
            return np.zeros((0, len(self.labels)))
        with torch.inference_mode():
            return torch.cat([torch.softmax(self.logits(memories[i:i + batch], statements[i:i + batch]), dim=-1)
                              for i in range(0, len(memories), batch)]).numpy().astype(float)

    def to_spec(self) -> dict:
        """The fitted numbers (updates and head) as plain lists, rounded to 5 significant digits."""
        def numbers(tensor) -> list:
            return np.vectorize(lambda x: float(f"{x:.5g}"))(tensor.detach().numpy().astype(float)).tolist()

        return {"labels": self.labels, "rank": self.rank, "scaling": self.scaling, "max_length": self.max_length,
                "targets": list(LOW_RANK_TARGETS),
                "updates": {name: {"a": numbers(u.a), "b": numbers(u.b)} for name, u in self.updates.items()},
                "head": {"weight": numbers(self.head.weight), "bias": numbers(self.head.bias)}}

    @classmethod
    def from_spec(cls, spec: dict, encoder_path: str) -> "PairCrossEncoder":
        import torch

        model = cls(encoder_path, spec["labels"], rank=int(spec["rank"]), scaling=float(spec["scaling"]),
                    max_length=int(spec["max_length"]))
        if set(spec["updates"]) != set(model.updates):
            raise ValueError("relation model: the cross-encoder's updates do not match the encoder's layers")
        with torch.no_grad():
            for name, numbers in spec["updates"].items():
                update = model.updates[name]
                a, b = torch.tensor(numbers["a"]), torch.tensor(numbers["b"])
                if a.shape != update.a.shape or b.shape != update.b.shape:
                    raise ValueError(f"relation model: the cross-encoder's update {name} has the wrong shape")
                update.a.copy_(a)
                update.b.copy_(b)
            model.head.weight.copy_(torch.tensor(spec["head"]["weight"]))
            model.head.bias.copy_(torch.tensor(spec["head"]["bias"]))
        return model
