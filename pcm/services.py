"""The heavy, shared parts of PCM: models, the memory store and the LLM client.

Graph nodes get them from a `Services` object instead of building them: models load
once per process (a few seconds each) and are shared by every thread and user.
`Services.for_context` caches one instance per distinct model/data settings; tests and
embedding applications can build their own (for example with a fake chat model).
"""

from __future__ import annotations

import logging
import threading
from functools import cached_property

from pcm.config import PCMContext
from pcm.llm import LLMClient, build_chat_model
from pcm.model_files import model_cache
from pcm.perception.intent import IntentRouter
from pcm.perception.language_model import CausalLMScorer, surprise_model_source
from pcm.perception.relation import PairJudge
from pcm.perception.surprise import SurpriseMonitor
from pcm.world.embeddings import Embedder, MultilingualEncoder
from pcm.world.store import MemoryStore

logger = logging.getLogger(__name__)
_MODEL_CACHE: dict[tuple, object] = {}
_SERVICES_CACHE: dict[tuple, "Services"] = {}
_LOCK = threading.RLock()


def _shared_model(key: tuple, build):
    with _LOCK:
        if key not in _MODEL_CACHE:
            _MODEL_CACHE[key] = build()
        return _MODEL_CACHE[key]


class Services:
    """Everything a PCM graph needs beyond its settings. Parts load lazily, on first use."""

    def __init__(self, ctx: PCMContext, chat_model: object | None = None):
        self.ctx = ctx
        self._chat_model = chat_model
        self._init_lock = threading.RLock()

    @classmethod
    def for_context(cls, ctx: PCMContext) -> "Services":
        key = (
            ctx.data_dir,
            ctx.embedding_model,
            ctx.surprise_model,
            ctx.surprise_model_file,
            ctx.surprise_context_tokens,
            ctx.llm_model,
            ctx.llm_base_url,
            tuple(ctx.domains),
            ctx.intent_temperature,
            ctx.dormant_floor,
            ctx.graph_store,
            ctx.vector_store,
            ctx.postgres_url,
            ctx.chroma_url,
            ctx.open_users,
            ctx.lock_timeout,
            ctx.turn_timeout,
            ctx.llm_timeout,
            ctx.llm_max_retries,
            ctx.llm_breaker_failures,
            ctx.llm_cooldown,
            ctx.llm_max_tokens,
            ctx.context_weight,
        )
        with _LOCK:
            if key not in _SERVICES_CACHE:
                _SERVICES_CACHE[key] = cls(ctx)
            return _SERVICES_CACHE[key]

    def with_context(self, ctx: PCMContext) -> "Services":
        """Services for other settings (e.g. another data dir) with the same chat model; the
        local models are shared through the process-wide cache, not loaded again."""
        return Services(ctx, chat_model=self._chat_model)

    @property
    def chat_model(self) -> object | None:
        """The chat model given at construction (None: built from the settings, or offline)."""
        return self._chat_model

    @cached_property
    def embedder(self) -> Embedder:
        with self._init_lock:
            ctx = self.ctx
            onnx = model_cache(ctx.model_cache) if ctx.embedding_runtime == "onnx" else None
            key = ("embedder", ctx.embedding_model, str(onnx))
            return _shared_model(key, lambda: Embedder(ctx.embedding_model, onnx_cache=onnx))

    @cached_property
    def language_model(self) -> CausalLMScorer:
        with self._init_lock:
            ctx = self.ctx
            key = ("lm", ctx.surprise_model, ctx.surprise_model_file, ctx.surprise_context_tokens)
            return _shared_model(key, lambda: CausalLMScorer(*surprise_model_source(ctx), ctx.surprise_context_tokens))

    @cached_property
    def llm(self) -> LLMClient | None:
        """The LLM client (its `usage` totals every turn's), or None on the offline path."""
        if self._chat_model is not None:
            return LLMClient.for_context(self._chat_model, self.ctx)
        if self.ctx.llm_enabled:
            return LLMClient.for_context(build_chat_model(self.ctx), self.ctx)
        return None

    @cached_property
    def intent_router(self) -> IntentRouter:
        with self._init_lock:
            return IntentRouter(self.embedder, self.ctx.domains, self.ctx.intent_temperature)

    def monitor(self, llm: LLMClient | None) -> SurpriseMonitor:
        """The surprise monitor asking `llm` (a turn's client, with its deadline) when it needs the LLM."""
        return SurpriseMonitor(self.language_model, llm, self.embedder, self.pair_judge)

    @cached_property
    def multilingual_encoder(self) -> MultilingualEncoder:
        """USE multilingual v3 (`multilingual_model`), loaded when a relation model reads it."""
        with self._init_lock:
            folder = self.ctx.multilingual_model
            return _shared_model(("multilingual", folder), lambda: MultilingualEncoder(folder))

    def pair_judge(self, ctx: PCMContext) -> PairJudge:
        """The relation model `ctx` names, over the encoders it reads (the model file loads once per
        version; the multilingual encoder only when the file names it)."""
        return PairJudge(self.embedder, ctx.relation_model_path, lambda: self.multilingual_encoder)

    @cached_property
    def store(self) -> MemoryStore:
        with self._init_lock:
            ctx = self.ctx
            return MemoryStore(
                ctx.data_dir,
                self.embedder,
                ctx.dormant_floor,
                graph_store=ctx.graph_store,
                postgres_url=ctx.postgres_url,
                vector_store=ctx.vector_store,
                chroma_url=ctx.chroma_url,
                open_users=ctx.open_users,
                lock_timeout=ctx.lock_timeout,
                turn_timeout=ctx.turn_timeout,
                context_weight=ctx.context_weight,
            )

    def warm_up(self) -> None:
        """Load every model now (for benchmarks and servers), not on the first turn."""
        _ = self.intent_router, self.language_model, self.store
