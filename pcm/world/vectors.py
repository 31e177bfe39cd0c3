"""The vector index of one user's memories: Chroma, embedded or a server, chosen by configuration.

Only memories retrieved by similarity (facts, hypotheses, attributes) have vectors; entities
are found by name. Each user has two collections, named by a hash of the user id: the live
memories, and the dormant ones (weight below the dormant floor). Default retrieval queries
the live collection without a metadata filter, which Chroma answers from its HNSW graph
alone; a filter would make it scan the metadata of every memory (about 0.1 s per query at
10,000 memories, measured). A memory moves between the two when it crosses the floor.

The index holds only committed memories: it is written after the graph store has committed
a turn, and the store tells which memories still have to be (re)indexed after a crash.
The process's Chroma client, and what makes its failures one-line errors, are in
`pcm.world.chroma`.
"""

from __future__ import annotations

import functools
import logging

import numpy as np

from pcm.world.chroma import ChromaConnection, first_line, is_panic
from pcm.world.storage_errors import StorageError, is_damaged

logger = logging.getLogger(__name__)
DORMANT_SUFFIX = "-dormant"


#: what embedded Chroma (1.5) raises when it reloads an index it evicted from its cache whose
#: HNSW files were never persisted (fewer than `hnsw:sync_threshold` = 1,000 writes since the
#: collection began): the vectors are all in its log, but the reload path does not replay it
EVICTED_INDEX_ERROR = "Error creating hnsw segment reader"


def reloading_evicted_indexes(method):
    """Run a `VectorIndex` method; if embedded Chroma fails to reload an index it evicted from
    its cache (`EVICTED_INDEX_ERROR`), restart the process's Chroma system, which rebuilds every
    index from its files and log on first use, and run the method once more. A panic of Chroma,
    or an error saying its database is damaged, becomes a `VectorIndexError` (one line)."""

    @functools.wraps(method)
    def run(self: "VectorIndex", *args, **kwargs):
        try:
            try:
                result = method(self, *args, **kwargs)
            except Exception as error:  # chromadb.errors.InternalError; chromadb is imported lazily
                if not self.connection.embedded or EVICTED_INDEX_ERROR not in str(error):
                    raise
                logger.info("embedded Chroma could not reload an evicted index (%s); restarting it", error)
                self.connection.restart(self._generation)
                result = method(self, *args, **kwargs)
        except BaseException as error:
            if not isinstance(error, StorageError) and (
                is_panic(error) or isinstance(error, Exception) and self.connection.embedded and is_damaged(error)
            ):
                raise self.connection.damaged(error, damage=first_line(error)) from None
            raise
        self.connection.served.add(self.key)
        return result

    return run


class VectorIndex:
    """The live and dormant collections of one user."""

    def __init__(self, connection: ChromaConnection, key: str):
        self.connection = connection
        self.key = key
        self._generation = -1
        self._live = self._dormant = None

    def _collections(self):
        connection = self.connection
        with connection.lock:
            if self._generation != connection.generation:
                options = {"embedding_function": None, "metadata": {"hnsw:space": "cosine"}}
                self._live = connection.client.get_or_create_collection(name=self.key, **options)
                self._dormant = connection.client.get_or_create_collection(name=self.key + DORMANT_SUFFIX, **options)
                self._generation = connection.generation
            return self._live, self._dormant

    @property
    def live(self):
        return self._collections()[0]

    @property
    def dormant(self):
        return self._collections()[1]

    @reloading_evicted_indexes
    def count(self) -> int:
        return self.live.count() + self.dormant.count()

    @reloading_evicted_indexes
    def ids(self) -> set[str]:
        """Every indexed memory id (reads the whole index: for repairs and tests)."""
        return {i for c in self._collections() for i in c.get(include=[])["ids"]}

    @reloading_evicted_indexes
    def metadata(self, node_id: str) -> dict | None:
        for collection in self._collections():
            got = collection.get(ids=[node_id], include=["metadatas"])
            if got["ids"]:
                return got["metadatas"][0]
        return None

    @reloading_evicted_indexes
    def vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        """The stored vectors of the given memories (those that are indexed)."""
        found: dict[str, np.ndarray] = {}
        if not ids:
            return found
        for collection in self._collections():
            wanted = [i for i in ids if i not in found]
            if not wanted:
                break
            got = collection.get(ids=wanted, include=["embeddings"])
            found.update((i, np.asarray(v, dtype=np.float32)) for i, v in zip(got["ids"], got["embeddings"]))
        return found

    @reloading_evicted_indexes
    def put(self, entries: list[tuple[str, np.ndarray, dict, bool]]) -> None:
        """Upsert (id, vector, metadata, dormant) entries into the right collection, and take
        each out of the other one (a memory that crossed the dormant floor moves)."""
        live, dormant = self._collections()
        with self.connection.writing():
            for collection, other, is_dormant in ((live, dormant, False), (dormant, live, True)):
                chosen = [e for e in entries if e[3] == is_dormant]
                if not chosen:
                    continue
                ids = [e[0] for e in chosen]
                collection.upsert(
                    ids=ids,
                    embeddings=np.stack([e[1] for e in chosen]).astype(np.float32),
                    metadatas=[e[2] for e in chosen],
                )
                other.delete(ids=ids)

    @reloading_evicted_indexes
    def delete(self, ids: list[str]) -> None:
        if not ids:
            return
        with self.connection.writing():
            for collection in self._collections():
                collection.delete(ids=ids)

    @reloading_evicted_indexes
    def query(
        self, vector: np.ndarray, n: int, include_dormant: bool = False, where: dict | None = None
    ) -> list[tuple[str, float]]:
        """(id, similarity) of the `n` nearest memories, best first: the dot product of the stored
        vector with the unit query (the cosine, for a unit-length stored vector)."""
        live, dormant = self._collections()
        collections = [live, dormant] if include_dormant else [live]
        found: list[tuple[str, float]] = []
        for collection in collections if n > 0 else []:
            result = collection.query(
                query_embeddings=[vector.tolist()], n_results=n, where=where, include=["distances", "metadatas"]
            )
            # a stored vector need not be unit length: its cosine times its norm ("norm" in its
            # metadata) is its dot product with the unit query
            found.extend(
                (i, (1.0 - float(d)) * float((meta or {}).get("norm", 1.0)))
                for i, d, meta in zip(result["ids"][0], result["distances"][0], result["metadatas"][0])
            )
        if len(collections) > 1:
            found.sort(key=lambda item: -item[1])
        return found[:n]
