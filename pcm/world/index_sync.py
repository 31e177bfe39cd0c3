"""Keeping a user's vector index in step with the memories committed to the graph store.

The vector index (`pcm.world.vectors`) holds only committed memories. A commit gathers the
vectors of the memories it adds or changes (`staged_entries`; new ones are embedded once and
kept with the staged writes), stores its rows, then writes those vectors (`write_committed`);
the graph store records up to which commit the vectors are known to be written. What a crash
between the two left out is re-written from the rows (`repair_index`, at the next turn or
open); an index that lost entries (deleted, restored from an older copy, moved aside as
damaged) is found at open (`check_index`) and by `pcm repair` (`reconcile_index`).
"""

from __future__ import annotations

import logging

import numpy as np

from pcm.models import RETRIEVABLE_VALUES, MemoryNode
from pcm.world.chroma import IncompleteIndexError, VectorIndexError, index_failure
from pcm.world.representation import index_vectors
from pcm.world.transaction import Transaction

logger = logging.getLogger(__name__)

#: how many vectors one call to the vector index carries at most
VECTOR_BATCH = 2000
#: a commit with more vectors than this records at once that they are written (the store
#: otherwise learns it with the next commit, and a reopen re-writes the last commit's vectors)
BIG_COMMIT = 64
#: at most this many memories missing from the vector index are re-embedded when a memory is
#: opened (`check_index`); more, and opening refuses, naming `pcm repair`
AUTO_REINDEX_LIMIT = 1000

VectorEntry = tuple[str, np.ndarray, dict, bool]


class IndexSync:
    """The vector index's side of one memory: `memory` is the WeightedKnowledgeGraph that owns
    it, `transaction` that memory's staged writes."""

    def __init__(self, memory, transaction: Transaction):
        self.memory = memory
        self.transaction = transaction
        #: the last commit whose vectors are known to be written
        self.indexed_through = 0

    # ------------------------------------------------------------------ vectors
    def embed(self, ids: list[str]) -> np.ndarray:
        """The index vectors of memories: own dated text and text in context, mixed (representation)."""
        memory = self.memory
        return index_vectors(memory.embedder.encode, [memory.node(i) for i in ids], memory.context_weight)

    def staged_vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        """Vectors of memories not yet in the vector index (embedded once, kept with the staged rows)."""
        staged = self.transaction.staged
        missing = [i for i in ids if i not in staged.vectors]
        if missing:
            staged.vectors.update(zip(missing, self.embed(missing)))
        return {i: staged.vectors[i] for i in ids}

    def embed_staged(self) -> None:
        """Embed the new memories staged for the next commit, which then only writes them."""
        with self.memory.lock:
            staged = self.transaction.staged
            self.staged_vectors([i for i in staged.reindex if i in staged.new])

    def vector_entry(self, node_id: str, vector: np.ndarray) -> VectorEntry:
        attrs = self.memory.graph.nodes[node_id]
        # the index ranks by cosine; the vector is not unit length, so its norm is kept to turn that
        # cosine back into the dot product with a unit query (VectorIndex.query)
        metadata = {
            "type": attrs["type"],
            "domain": attrs.get("domain") or "",
            "created_at": MemoryNode.model_validate(attrs).created_at.timestamp(),
            "norm": float(np.linalg.norm(vector)),
        }
        return node_id, vector, metadata, node_id in self.memory.model.dormant

    def _put(self, entries: list[VectorEntry]) -> None:
        for start in range(0, len(entries), VECTOR_BATCH):
            self.memory.vectors.put(entries[start : start + VECTOR_BATCH])

    # ------------------------------------------------------------------ commits
    def staged_entries(self) -> list[VectorEntry]:
        """The index entries of the memories the next commit adds or changes: new ones embedded
        (once), changed ones with the vector the index holds (embedded if it lacks it)."""
        staged = self.transaction.staged
        reindex = list(staged.reindex)
        new = [i for i in reindex if i in staged.new]
        self.staged_vectors(new)
        kept = self.memory.vectors.vectors([i for i in reindex if i not in staged.new])
        entries = [self.vector_entry(i, staged.vectors[i] if i in staged.vectors else kept.get(i)) for i in reindex]
        missing = [e[0] for e in entries if e[1] is None]
        if missing:
            vectors = self.staged_vectors(missing)
            entries = [e if e[1] is not None else self.vector_entry(e[0], vectors[e[0]]) for e in entries]
        return entries

    def write_committed(self, entries: list[VectorEntry], previous: int) -> None:
        """Write the vectors of the commit just stored (`memory.seq`; the one before, `previous`).
        If they cannot be, the next turn repairs the index."""
        memory = self.memory
        try:
            self._put(entries)
        except Exception:
            logger.exception(
                "the vector index of %s missed commit %d; it is repaired at the next turn", memory.key, memory.seq
            )
            return
        if self.indexed_through == previous:
            self.indexed_through = memory.seq
            if len(entries) > BIG_COMMIT:
                memory.records.mark_indexed(memory.key, memory.seq)  # or the next open would re-write them all

    # ------------------------------------------------------------------ repair
    def open_index(self) -> int:
        """At open: re-write the vectors a crash left out (`repair_index`), then check that the
        index holds every memory (`check_index`); returns how many memories it lacked. If the
        index fails at it because its database is damaged, and this process has not used it
        yet, it is moved aside and rebuilt (`ChromaConnection.recover`); otherwise the failure
        is a `VectorIndexError` naming `pcm repair`."""
        connection = self.memory.vectors.connection
        try:
            self.repair_index()
            return self.check_index()
        except BaseException as error:
            if not index_failure(error) or isinstance(error, IncompleteIndexError):
                raise
            if not connection.recover(error, self.memory.key):
                raise (error if isinstance(error, VectorIndexError) else connection.damaged(error)) from None
        self.repair_index()
        return self.check_index()

    def repair_index(self) -> int:
        """Re-write the vectors of every commit after the last one known to be indexed (after a
        crash between a commit and its vector writes); returns how many memories it re-wrote."""
        memory = self.memory
        user = memory.records.user(memory.key)
        if user is None or user.indexed_seq >= user.seq:
            self.indexed_through = memory.seq
            return 0
        with memory.lock:
            graph = memory.graph
            ids = [
                i
                for i, _, _, _ in memory.records.nodes(memory.key, user.indexed_seq)
                if i in graph and graph.nodes[i]["type"] in RETRIEVABLE_VALUES
            ]
            kept = memory.vectors.vectors(ids)
            missing = [i for i in ids if i not in kept]
            if missing:
                logger.warning("re-indexing %d memories of %s missing from the vector index", len(missing), memory.key)
                kept.update(zip(missing, self.embed(missing)))
            entries = [self.vector_entry(i, kept[i]) for i in ids]
        self._put(entries)
        memory.records.mark_indexed(memory.key, user.seq)
        self.indexed_through = user.seq
        return len(entries)

    def check_index(self) -> int:
        """At open: if the vector index holds fewer entries than the memory has retrievable
        memories, rebuild the missing ones from the graph store, with a warning; returns how
        many it added.

        A deleted index folder, one restored from an older copy, or one moved aside as damaged
        would otherwise open without complaint and find nothing. The check is a count of the
        user's two collections: at 3,000 memories about 20 ms, most of it loading the collection
        that the first search loads anyway (open plus first search 0.206 -> 0.222 s, median of
        15, measured). It rebuilds automatically rather than refusing to open, because the graph
        store is the record and re-embedding what is missing is the whole repair; but that costs
        about 25 ms a memory (3,000 in 75 s on 2 CPU cores), so past `reindex_limit` missing
        memories opening refuses with a `VectorIndexError` naming `pcm repair` instead of
        stalling for minutes. An index holding more entries than the memory is left alone here
        (another process may have committed since this one loaded); `reconcile_index`
        (`pcm repair`) removes entries with no memory."""
        memory = self.memory
        expected = memory.retrievable_count()
        if not expected:
            return 0
        indexed = memory.vectors.count()
        if indexed >= expected:
            return 0
        if memory.reindex_limit is not None and expected - indexed > memory.reindex_limit:
            connection = memory.vectors.connection
            raise IncompleteIndexError(
                f"the vector index of user {memory.user_id!r} holds {indexed} of its {expected} "
                f"memories (deleted, damaged or restored from an older copy?); run `pcm "
                f"repair --data-dir {connection.data_dir}` to rebuild it from the stored "
                "memories"
            )
        logger.warning(
            "the vector index of user %r holds %d of its %d memories (deleted, damaged or restored "
            "from an older copy?): rebuilding the missing ones from the stored memories",
            memory.user_id,
            indexed,
            expected,
        )
        return self.reconcile_index(remove_extra=False)[1]

    def reconcile_index(self, remove_extra: bool = True) -> tuple[int, int]:
        """Make the vector index hold exactly the retrievable memories, reading every id in it
        (a full check, for `pcm repair`, tests and `check_index`; turns rely on `repair_index`).
        Returns how many entries it removed (none unless `remove_extra`) and how many it added."""
        memory = self.memory
        with memory.lock:
            stored = memory.model.retrievable_ids() - set(self.transaction.staged.new)
        indexed = memory.vectors.ids()
        extra = sorted(indexed - stored) if remove_extra else []
        if extra:
            logger.warning("removing %d index entries with no memory", len(extra))
            memory.vectors.delete(extra)
        missing = sorted(stored - indexed)
        for start in range(0, len(missing), VECTOR_BATCH):
            batch = missing[start : start + VECTOR_BATCH]
            with memory.lock:
                entries = [self.vector_entry(i, v) for i, v in zip(batch, self.embed(batch))]
            memory.vectors.put(entries)
        return len(extra), len(missing)
