"""`PCM`: the graph with a durable checkpointer, plus direct access to each user's memory.

This is what the CLI, the evaluation harness and the agent tools use. Threads are
namespaced by user, so two users who both call their thread "main" never share
working memory.
"""

from __future__ import annotations

import logging
import sqlite3
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from pcm.checkpoints import make_checkpointer
from pcm.config import PCMContext, resolve_context
from pcm.graph import build_graph
from pcm.models import MemoryChange, RetrievedMemory
from pcm.nodes.memory import flush_working_memory
from pcm.perception.intent import classify_intent
from pcm.services import Services
from pcm.validation import AlreadyStored, admit_turn, validate_input, validate_user_id
from pcm.world.knowledge_graph import WeightedKnowledgeGraph, user_key
from pcm.world.retrieval import retrieve
from pcm.world.storage_errors import storage_error
from pcm.world.text import in_first_person

logger = logging.getLogger(__name__)


class PCM:
    """One PCM deployment: settings, loaded models, memory store, checkpointed graph.

    `checkpointer` is "config" (the one `ctx.checkpointer` names), "sqlite", "postgres", a
    LangGraph checkpointer, or None (no working memory between calls).
    """

    def __init__(self, ctx: PCMContext | None = None, services: Services | None = None, checkpointer: Any = "config"):
        self.ctx = resolve_context(ctx, trusted=True)
        self.services = services or Services(self.ctx)
        if isinstance(checkpointer, str):
            checkpointer = make_checkpointer(self.ctx, None if checkpointer == "config" else checkpointer)
        self.checkpointer = checkpointer
        self.graph = build_graph(self.services, checkpointer=checkpointer)

    @contextmanager
    def _storage_errors(self):
        """Raise a full disk or an unwritable data directory met while running a turn (by the
        checkpointer, the lock files or the index; the graph store raises its own) as a
        one-line `StorageError` naming the data directory."""
        try:
            yield
        except (sqlite3.Error, OSError) as error:
            named = getattr(error, "filename", None)
            translated = storage_error(
                error, named or Path(self.ctx.data_dir) / "checkpoints.sqlite", folder=self.ctx.data_dir
            )
            if translated is None:
                raise
            raise translated from error

    def config(self, user_id: str, thread_id: str | None = None) -> dict:
        validate_user_id(user_id)
        return {"configurable": {"thread_id": f"{user_key(user_id)}/{thread_id or 'main'}"}}

    def process(
        self,
        text: str,
        *,
        user_id: str = "default",
        thread_id: str | None = None,
        speaker: str | None = None,
        timestamp: str | None = None,
        dialog_ids: list[str] | None = None,
        force_level: str | None = None,
        target_ids: list[str] | None = None,
        note: str | None = None,
        message_id: str | None = None,
    ) -> dict:
        """Run one turn through the graph; bad input raises ValueError before anything changes.

        The turn is atomic: if any node raises, nothing of it stays in long-term or working
        memory. It holds the user's memory (and so its checkpointed threads) from start to
        end: a second writer of the same user waits, in this process or another, up to
        `lock_timeout` seconds (then `MemoryBusyError`, nothing changed).
        `force_level` skips the router's decision (the tools' explicit correction), `target_ids`
        names the memories a correction supersedes, `note` is recorded in their audit reason.
        `message_id` is stored with the turn; a message whose id is already stored is not
        processed again and `{"already_stored": True, "message_id": ...}` is returned.
        """
        config = self.config(user_id, thread_id)
        payload = {
            "user_input": text,
            "user_id": user_id,
            "speaker": speaker,
            "timestamp": timestamp,
            "dialog_ids": [] if dialog_ids is None else dialog_ids,
            "force_level": force_level,
            "target_ids": [] if target_ids is None else target_ids,
            "note": note,
            "message_id": message_id,
        }
        with self._storage_errors(), self.services.store.exclusive(user_id):
            try:  # the graph's entry edge admits it too, but LangGraph would checkpoint a refused input
                admit_turn(payload, user_id, self.services.store, self.ctx)
            except AlreadyStored:
                return {"already_stored": True, "message_id": message_id}
            durability = {"durability": "exit"} if self.checkpointer is not None else {}
            return self.graph.invoke(payload, config, context=self.ctx, **durability)

    def state(self, user_id: str, thread_id: str | None = None) -> dict:
        if self.checkpointer is None:
            return {}
        return self.graph.get_state(self.config(user_id, thread_id)).values

    def flush(self, user_id: str, thread_id: str | None = None) -> list[dict]:
        """Consolidate everything in working memory now and empty it (e.g. at the end of an ingestion).

        Idempotent: the consolidation is committed with a marker of the thread and turn, so a
        flush repeated after a crash (before working memory was emptied) stores nothing twice.
        """
        config = self.config(user_id, thread_id)
        thread = config["configurable"]["thread_id"]
        store = self.services.store
        with self._storage_errors(), store.exclusive(user_id) as turn:
            state = self.state(user_id, thread_id)
            marker = f"flush:{thread}:{state.get('committed_turn', state.get('turn', 0))}"
            changes = []
            waiting = (
                state.get("working_memory") or state.get("pending_consolidation") or state.get("pending_extraction")
            )
            if waiting and not turn.memory.has_message(marker):
                changes = flush_working_memory(state, thread, self.ctx, self.services)
                turn.commit([marker])
            if state:
                self.graph.update_state(
                    config,
                    {"working_memory": [], "pending_consolidation": [], "pending_extraction": []},
                    as_node="persist",
                )
        return changes

    def memory(self, user_id: str, create: bool = False) -> WeightedKnowledgeGraph:
        """The user's memory, with what other processes committed loaded."""
        return self.services.store.open(user_id, create=create, refresh=True)

    def search(
        self,
        query: str,
        *,
        user_id: str = "default",
        top_k: int | None = None,
        use_intent: bool = True,
        use_weights: bool = True,
        expand: bool = True,
        use_contests: bool = True,
        use_time: bool = True,
        use_answer_type: bool = True,
        as_of: datetime | str | None = None,
    ) -> list[RetrievedMemory]:
        """Intent-masked retrieval for `query` without changing memory; unknown users have none.
        With `as_of`, the weights and links as they stood at that time (from the audit log).
        `use_weights`, `expand`, `use_contests`, `use_time`, `use_answer_type` off: the benchmarks' ablations.
        `top_k` (default: the `top_k` setting) must be at least 1. The encoder reads a question about
        "the user" in the user's own first person (`in_first_person`)."""
        validate_input(query, self.ctx)
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
            raise ValueError(f"top_k must be a whole number of at least 1, got {top_k!r}")
        if not self.services.store.exists(user_id):
            return []
        intent = None
        if use_intent:
            llm = self.services.llm.for_turn(self.ctx.llm_turn_deadline) if self.services.llm else None
            intent = classify_intent(query, [], self.services.intent_router, self.ctx, llm).distribution
        vector = self.services.embedder.encode_one(in_first_person(query))
        with self.services.store.reading(user_id) as graph:
            return retrieve(
                graph.as_of(as_of) if as_of is not None else graph,
                query,
                vector,
                self.ctx,
                intent=intent,
                top_k=top_k,
                use_weights=use_weights,
                expand=expand,
                use_contests=use_contests,
                use_time=use_time,
                use_answer_type=use_answer_type,
                across_scripts=True,
                multilingual=self._cross_script_encoder(),
            )

    def _cross_script_encoder(self):
        """What search compares a query with memories in the other script by: the multilingual
        encoder, loaded on first use (`cross_script_multilingual` off: nothing, sim unknown)."""
        if not self.ctx.cross_script_multilingual:
            return None
        return lambda: self.services.multilingual_encoder

    def history(self, user_id: str, node_id: str) -> list[MemoryChange]:
        return self.memory(user_id).history(node_id)
