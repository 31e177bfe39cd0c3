"""All users' long-term memories under one data directory, one namespace per user.

Each user gets a folder `users/<key>/` (graph and audit log) and a Chroma collection
named by the same key, a hash of the user id: ids can hold any characters, and one
user's memories are never in another's collection or graph.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

from pcm.world.embeddings import Embedder
from pcm.world.knowledge_graph import WeightedKnowledgeGraph, user_key

logger = logging.getLogger(__name__)
MAX_USER_ID_CHARS = 256


def validate_user_id(user_id: object) -> str:
    if not isinstance(user_id, str) or not user_id.strip():
        raise ValueError("user_id must be a non-empty string")
    if len(user_id) > MAX_USER_ID_CHARS:
        raise ValueError(f"user_id is longer than {MAX_USER_ID_CHARS} characters")
    if any(ord(c) < 32 for c in user_id):
        raise ValueError("user_id must not contain control characters")
    return user_id


class MemoryStore:
    """Opens (and caches) each user's WeightedKnowledgeGraph in one data directory."""

    def __init__(self, data_dir: str | Path, embedder: Embedder, dormant_floor: float = 0.05,
                 context_weight: float = 0.5):
        import chromadb
        from chromadb.config import Settings

        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.embedder = embedder
        self.dormant_floor = dormant_floor
        self.context_weight = context_weight
        self.client = chromadb.PersistentClient(
            path=str(self.data_dir / "chroma"),
            settings=Settings(anonymized_telemetry=False, allow_reset=False))
        self._graphs: dict[str, WeightedKnowledgeGraph] = {}
        self._lock = threading.Lock()

    def user_folder(self, user_id: str) -> Path:
        return self.data_dir / "users" / user_key(user_id)

    def exists(self, user_id: str) -> bool:
        return (self.user_folder(validate_user_id(user_id)) / "graph.json").exists() or user_id in self._graphs

    def users(self) -> list[str]:
        """User ids with saved memory in this data directory."""
        found = []
        for meta in sorted((self.data_dir / "users").glob("*/user.json")):
            found.append(json.loads(meta.read_text(encoding="utf-8"))["user_id"])
        return found

    def open(self, user_id: str, create: bool = True) -> WeightedKnowledgeGraph:
        """The memory of `user_id`; with create=False an unknown user is an error, not a new store."""
        validate_user_id(user_id)
        with self._lock:
            if user_id not in self._graphs:
                if not create and not self.exists(user_id):
                    raise LookupError(f"no memory for user {user_id!r} in {self.data_dir}")
                collection = self.client.get_or_create_collection(
                    name=user_key(user_id), embedding_function=None,
                    metadata={"hnsw:space": "cosine"})
                self._graphs[user_id] = WeightedKnowledgeGraph(
                    user_id, self.user_folder(user_id), collection, self.embedder, self.dormant_floor,
                    self.context_weight)
            return self._graphs[user_id]
