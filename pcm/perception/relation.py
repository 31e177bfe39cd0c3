"""Relation model: how a new statement relates to one stored memory.

`RelationModel` answers P(consistent), P(novel), P(contradiction) for a (memory,
statement) pair. Its input is built from the shipped sentence encoder (the vectors
retrieval already computes) and the offline cue counts of `pcm.cues`; its
head is a multinomial logistic regression shipped as plain JSON numbers
(`pcm/calibration/relation.json`), read here with numpy only. `python -m evals
fit-relation` (`make fit-relation`) rebuilds it from `training/relation_pairs/` and
chooses the routing thresholds on the dev scenario files.

Feature blocks (the file's `features` lists which, in order):
- `product`    u ⊙ v (what memory and statement share, dimension by dimension)
- `difference` |u − v| (where they differ)
- `statement`  v itself (what kind of statement it is: a routine episode, a plan, a change)
- `cosine`     u · v
- `cues`       the statement's cue counts (change, additive, routine, exclusive, negation),
               whether it is a request, whether it is Chinese, and the share of its content
               words the memory already has.
- `bilinear`   every product of a memory coordinate with a statement coordinate in the k
               leading principal directions of the training texts' vectors
               (`pcm.formulas.subspace_interaction`): what the memory is about against what the
               statement says ("a plant-based diet" against "pork chops for dinner"), which the
               dimension-by-dimension `product` cannot pair. The subspace (`SubspaceBasis`) ships
               in the file beside the head.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pcm.cues import FAMILIES, cue_counts
from pcm.formulas import joint_embedding, softmax, subspace_interaction
from pcm.speech_acts import is_request
from pcm.world.text import content_words, has_cjk

logger = logging.getLogger(__name__)

RELATIONS = ("consistent", "novel", "contradiction")
#: the sentence encoders a relation model may read, by the name its file gives them (`encoders`):
#: the configured `embedding_model` retrieval indexes with, and USE multilingual v3
ENCODERS = ("embedder", "multilingual")
FEATURE_BLOCKS = ("product", "difference", "statement", "cosine", "cues", "bilinear")
CUE_NAMES = (*FAMILIES, "request", "chinese", "word_overlap")


def cue_features(memory: str, statement: str) -> np.ndarray:
    """The `cues` block: cue counts of the statement, request, Chinese, and word overlap with the memory."""
    counts = cue_counts(statement)
    memory_words = set(content_words(memory))
    statement_words = set(content_words(statement))
    overlap = len(memory_words & statement_words) / len(statement_words) if statement_words else 0.0
    return np.asarray(
        [*(counts[f] for f in FAMILIES), float(is_request(statement)), float(has_cjk(statement)), overlap], dtype=float
    )


@dataclass(frozen=True)
class SubspaceBasis:
    """The `bilinear` block's subspace: its centre μ (d numbers) and k orthonormal directions (k × d)."""

    mean: np.ndarray
    components: np.ndarray

    @classmethod
    def fit(cls, vectors: np.ndarray, rank: int) -> "SubspaceBasis":
        """The `rank` leading principal directions of `vectors` (one text per row)."""
        vectors = np.asarray(vectors, dtype=float)
        if not 1 <= rank <= min(vectors.shape):
            raise ValueError(f"a subspace of rank {rank} needs at least {rank} vectors of dimension ≥ {rank}")
        mean = vectors.mean(axis=0)
        _, _, directions = np.linalg.svd(vectors - mean, full_matrices=False)
        return cls(mean=mean, components=directions[:rank])

    @classmethod
    def from_spec(cls, spec: dict | None) -> "SubspaceBasis | None":
        if not spec:
            return None
        return cls(mean=np.asarray(spec["mean"], dtype=float), components=np.asarray(spec["components"], dtype=float))

    def to_spec(self) -> dict:
        return {"mean": self.mean.tolist(), "components": self.components.tolist()}

    @property
    def rank(self) -> int:
        return int(self.components.shape[0])


def pair_features(
    blocks: list[str] | tuple[str, ...],
    memory_vector: np.ndarray,
    statement_vector: np.ndarray,
    memory: str,
    statement: str,
    basis: SubspaceBasis | None = None,
) -> np.ndarray:
    """One pair's feature vector, blocks in the order given (see the module docstring); the
    `bilinear` block needs the `basis` of its subspace."""
    u = np.asarray(memory_vector, dtype=float)
    v = np.asarray(statement_vector, dtype=float)
    parts = []
    for block in blocks:
        if block == "product":
            parts.append(u * v)
        elif block == "difference":
            parts.append(np.abs(u - v))
        elif block == "statement":
            parts.append(v)
        elif block == "cosine":
            parts.append(np.asarray([float(u @ v)]))
        elif block == "cues":
            parts.append(cue_features(memory, statement))
        elif block == "bilinear":
            if basis is None:
                raise ValueError("the bilinear feature block needs the subspace basis it was fitted with")
            parts.append(subspace_interaction(u, v, basis.mean, basis.components))
        else:
            raise ValueError(f"unknown feature block {block!r}; known: {FEATURE_BLOCKS}")
    return np.concatenate(parts)


@dataclass(frozen=True)
class RelationThresholds:
    """The pair router's decision thresholds (see `pcm.formulas.pair_level`)."""

    contradiction: float
    consistent: float
    cue: float = 1.01


class RelationModel:
    """The pair head: standardise the features, then softmax(W·x + b) over `labels`."""

    def __init__(self, spec: dict):
        self.spec = spec
        self.features = list(spec["features"])
        self.labels = list(spec["labels"])
        if sorted(self.labels) != sorted(RELATIONS):
            raise ValueError(f"relation model labels must be {RELATIONS}, got {self.labels}")
        self.mean = np.asarray(spec["mean"], dtype=float)
        self.scale = np.asarray(spec["scale"], dtype=float)
        self.coef = np.asarray(spec["coef"], dtype=float)
        self.intercept = np.asarray(spec["intercept"], dtype=float)
        self.dimension = int(spec["dimension"])
        self.basis = SubspaceBasis.from_spec(spec.get("basis"))
        if "bilinear" in self.features and (self.basis is None or self.basis.components.shape[1] != self.dimension):
            raise ValueError("relation model: the bilinear block needs a basis of the encoder's dimension")
        if (
            self.coef.shape != (len(self.labels), self.mean.size)
            or self.scale.size != self.mean.size
            or self.intercept.size != len(self.labels)
        ):
            raise ValueError("relation model: coef, mean, scale and intercept sizes do not match")
        thresholds = spec.get("thresholds") or {}
        self.thresholds = RelationThresholds(
            contradiction=float(thresholds.get("contradiction", 0.5)),
            consistent=float(thresholds.get("consistent", 0.5)),
            cue=float(thresholds.get("cue", 1.01)),
        )
        self.encoder = spec.get("encoder", "")
        self.encoders = list(spec.get("encoders", ["embedder"]))
        if not self.encoders or set(self.encoders) - set(ENCODERS):
            raise ValueError(f"relation model encoders must be among {ENCODERS}, got {self.encoders}")

    def probabilities_from_features(self, features: np.ndarray) -> list[dict[str, float]]:
        """P(relation | pair) for each row of a feature matrix."""
        x = (np.atleast_2d(features) - self.mean) / self.scale
        logits = x @ self.coef.T + self.intercept
        return [dict(zip(self.labels, softmax(row.tolist()))) for row in logits]

    def judge(
        self, memory_vectors: np.ndarray, statement_vector: np.ndarray, memories: list[str], statement: str
    ) -> list[dict[str, float]]:
        """P(relation) of `statement` to each memory (its text and encoder vector)."""
        if not memories:
            return []
        if np.asarray(statement_vector).shape[-1] != self.dimension:
            raise ValueError(
                f"relation model expects {self.dimension}-dimensional vectors from "
                f"{self.encoder or 'its encoder'}, got {np.asarray(statement_vector).shape[-1]}"
            )
        rows = np.stack(
            [
                pair_features(self.features, u, statement_vector, m, statement, self.basis)
                for u, m in zip(memory_vectors, memories)
            ]
        )
        return self.probabilities_from_features(rows)


_MODELS: dict[tuple[str, float], RelationModel] = {}


def load_relation_model(path: str | Path) -> RelationModel:
    """The relation model stored at `path` (cached per file version); a clear error if it is missing."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no relation model at {path}; build one with `python -m evals fit-relation`")
    key = (str(path), path.stat().st_mtime)
    if key not in _MODELS:
        _MODELS[key] = RelationModel(json.loads(path.read_text(encoding="utf-8")))
    return _MODELS[key]


def encode_for_relation(encoders: list[str], sources: dict, texts: list[str]) -> np.ndarray:
    """The texts' vectors as a relation model reads them: each of its `encoders`' unit vectors side
    by side (`pcm.formulas.joint_embedding`); `sources` maps an encoder's name to a function returning
    the encoder (so that one no model names is never loaded)."""
    parts = []
    for name in encoders:
        encoder = sources[name]() if name in sources else None
        if encoder is None:
            raise ValueError(f"the relation model reads the {name!r} encoder, which is not available")
        parts.append(encoder.encode(texts))
    return joint_embedding(parts)


class PairJudge:
    """The relation model at `model_path` over the encoders it names (`embedder`, and
    `multilingual`, a function returning the multilingual encoder): the verdicts on (memory,
    statement) pairs that perception reads and maintenance asks for the facts a turn supports."""

    def __init__(self, embedder, model_path: Path, multilingual=None):
        self.embedder, self.model_path, self.multilingual = embedder, Path(model_path), multilingual

    def __call__(self, text: str, memories: list) -> dict[str, dict[str, float]]:
        """P(consistent/novel/contradiction) of `text` against each of `memories` (retrieved
        memories), by memory id; {} when there are none or no relation model is available."""
        if not memories or self.embedder is None or not self.model_path.is_file():
            return {}
        texts = [*(m.content for m in memories), text]
        vectors = self.encode(texts)
        verdicts = load_relation_model(self.model_path).judge(vectors[:-1], vectors[-1], texts[:-1], text)
        return {m.id: verdict for m, verdict in zip(memories, verdicts)}

    def encode(self, texts: list[str]) -> np.ndarray:
        """The texts' vectors as the relation model at `model_path` reads them."""
        return encode_for_relation(
            load_relation_model(self.model_path).encoders,
            {"embedder": lambda: self.embedder, "multilingual": self.multilingual or (lambda: None)},
            texts,
        )

    @property
    def thresholds(self) -> RelationThresholds:
        return load_relation_model(self.model_path).thresholds
