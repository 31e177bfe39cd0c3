"""The vector index of one user's memories: Chroma, embedded or a server, chosen by configuration.

Only memories retrieved by similarity (facts, hypotheses, attributes) have vectors; entities
are found by name. Each user has two collections, named by a hash of the user id: the live
memories, and the dormant ones (weight below the dormant floor). Default retrieval queries
the live collection without a metadata filter, which Chroma answers from its HNSW graph
alone; a filter would make it scan the metadata of every memory (about 0.1 s per query at
10,000 memories, measured). A memory moves between the two when it crosses the floor.

The index holds only committed memories: it is written after the graph store has committed
a turn, and the store tells which memories still have to be (re)indexed after a crash.
Embeddings are always computed by PCM (never by Chroma), and telemetry is off.
"""

from __future__ import annotations

import logging
from urllib.parse import urlparse

import numpy as np

logger = logging.getLogger(__name__)
DORMANT_SUFFIX = "-dormant"


def chroma_client(kind: str, data_dir: str, url: str = ""):
    """An embedded Chroma under `data_dir/chroma` ("chroma"), or a Chroma server ("chroma-server")."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    if kind == "chroma":
        return chromadb.PersistentClient(path=f"{data_dir}/chroma", settings=settings)
    if kind == "chroma-server":
        if not url:
            raise ValueError("vector_store 'chroma-server' needs chroma_url (e.g. http://127.0.0.1:8000)")
        parsed = urlparse(url)
        return chromadb.HttpClient(host=parsed.hostname or "127.0.0.1", port=parsed.port or 8000,
                                   ssl=parsed.scheme == "https", settings=settings)
    raise ValueError(f"vector_store must be 'chroma' or 'chroma-server', not {kind!r}")


class VectorIndex:
    """The live and dormant collections of one user."""

    def __init__(self, client, key: str):
        options = {"embedding_function": None, "metadata": {"hnsw:space": "cosine"}}
        self.live = client.get_or_create_collection(name=key, **options)
        self.dormant = client.get_or_create_collection(name=key + DORMANT_SUFFIX, **options)

    def count(self) -> int:
        return self.live.count() + self.dormant.count()

    def ids(self) -> set[str]:
        """Every indexed memory id (reads the whole index: for repairs and tests)."""
        return {i for c in (self.live, self.dormant) for i in c.get(include=[])["ids"]}

    def metadata(self, node_id: str) -> dict | None:
        for collection in (self.live, self.dormant):
            got = collection.get(ids=[node_id], include=["metadatas"])
            if got["ids"]:
                return got["metadatas"][0]
        return None

    def vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        """The stored vectors of the given memories (those that are indexed)."""
        found: dict[str, np.ndarray] = {}
        if not ids:
            return found
        for collection in (self.live, self.dormant):
            wanted = [i for i in ids if i not in found]
            if not wanted:
                break
            got = collection.get(ids=wanted, include=["embeddings"])
            found.update((i, np.asarray(v, dtype=np.float32)) for i, v in zip(got["ids"], got["embeddings"]))
        return found

    def put(self, entries: list[tuple[str, np.ndarray, dict, bool]]) -> None:
        """Upsert (id, vector, metadata, dormant) entries into the right collection, and take
        each out of the other one (a memory that crossed the dormant floor moves)."""
        for collection, other, dormant in ((self.live, self.dormant, False), (self.dormant, self.live, True)):
            chosen = [e for e in entries if e[3] == dormant]
            if not chosen:
                continue
            ids = [e[0] for e in chosen]
            collection.upsert(ids=ids, embeddings=np.stack([e[1] for e in chosen]).astype(np.float32),
                              metadatas=[e[2] for e in chosen])
            other.delete(ids=ids)

    def delete(self, ids: list[str]) -> None:
        for collection in (self.live, self.dormant):
            if ids:
                collection.delete(ids=ids)

    def query(self, vector: np.ndarray, n: int, include_dormant: bool = False,
              where: dict | None = None) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the `n` nearest memories, best first."""
        collections = [self.live, self.dormant] if include_dormant else [self.live]
        found: list[tuple[str, float]] = []
        for collection in collections if n > 0 else []:
            result = collection.query(query_embeddings=[vector.tolist()], n_results=n, where=where,
                                      include=["distances"])
            found.extend((i, 1.0 - float(d)) for i, d in zip(result["ids"][0], result["distances"][0]))
        if len(collections) > 1:
            found.sort(key=lambda item: -item[1])
        return found[:n]
