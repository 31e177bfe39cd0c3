"""Loading one user's memory from the graph store, and writing its commits there.

The graph is loaded from the rows (`pcm.world.records`), never rewritten to them: a commit
writes only the staged rows, in one transaction, and gets the user's next sequence number;
`refresh` loads only the rows another process committed since the one this copy has seen.
Stored words are read as they are, unless another tokeniser made them
(`pcm.world.memory_words`). `export` gives the whole memory as JSON-able data.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

import networkx as nx
import orjson

from pcm.world.index_sync import IndexSync
from pcm.world.memory_words import parse_stored_words, stored_words, stored_words_prefix, words_of
from pcm.world.records import CommitRows
from pcm.world.transaction import Transaction

logger = logging.getLogger(__name__)

#: node-link JSON layout, with key names that do not collide with the records' own
#: attributes (nodes carry "id", edges carry "source" and "target")
NODE_LINK = {"edges": "edges", "name": "node_key", "source": "from_key", "target": "to_key"}


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` so that a crash leaves either the old or the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def collection_paused():
    """Pause the cyclic garbage collector while loading: a large memory allocates millions of
    objects none of which is garbage, and the collections that allocation triggers halved the
    speed of a cold open."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def row_json(value) -> str:
    """Attributes as a row stores them: compact JSON, non-ASCII characters as they are."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class GraphPersistence:
    """The graph store's side of one memory: `memory` is the WeightedKnowledgeGraph that owns
    it, `transaction` its staged writes, `index_sync` its vector index's side."""

    def __init__(self, memory, transaction: Transaction, index_sync: IndexSync):
        self.memory = memory
        self.transaction = transaction
        self.index_sync = index_sync

    # ------------------------------------------------------------------ reading
    def load(self) -> None:
        """Load the user's stored memory (nothing for a new user), re-tokenise stored words of
        another tokeniser, and repair and check the vector index (`IndexSync.open_index`)."""
        memory = self.memory
        user = memory.records.user(memory.key)
        if user is None:
            return
        with collection_paused():
            self._load_rows(user)

    def _load_rows(self, user) -> None:
        memory = self.memory
        retokenised = []
        rows = []
        prefix = stored_words_prefix()  # `parse_stored_words`, inlined: a cold open reads every row
        for node_id, order, attrs, words in memory.records.nodes(memory.key):
            attrs = orjson.loads(attrs)
            if words.startswith(prefix):
                words = words[len(prefix) :].split()
            else:
                words = words_of(attrs)
                retokenised.append(node_id)
            rows.append((node_id, order, attrs, words))
        memory.model.insert(rows)
        memory.graph.add_edges_from((s, t, orjson.loads(a)) for s, t, a in memory.records.edges(memory.key))
        memory.seq = user.seq
        self.index_sync.indexed_through = user.indexed_seq
        memory.vectors.connection.ensure_fresh(memory.key, memory.seq)
        if memory.records.read_only:  # read as it is: the store cannot take the new words or a repair
            return
        if retokenised:
            logger.info("re-tokenising %d memories of %s for the lexical index", len(retokenised), memory.key)
            memory.records.update_words(
                memory.key, [(i, stored_words(words_of(memory.graph.nodes[i]))) for i in retokenised]
            )
        memory.reindexed_at_open = self.index_sync.open_index()

    def refresh(self) -> bool:
        """Load what another process committed since this copy was loaded; True if anything was."""
        memory = self.memory
        user = memory.records.user(memory.key)
        if user is None or user.seq == memory.seq:
            return False
        with memory.lock:
            if self.transaction.staged:
                raise RuntimeError(
                    f"memory of {memory.user_id!r} changed in another process while this process "
                    "had uncommitted writes; write under MemoryStore.exclusive(user_id)"
                )
            for node_id, order, attrs, words in memory.records.nodes(memory.key, memory.seq):
                attrs = json.loads(attrs)
                if node_id in memory.graph:
                    memory.model.set_attrs(node_id, attrs)
                else:
                    parsed = parse_stored_words(words)
                    memory.model.insert([(node_id, order, attrs, words_of(attrs) if parsed is None else parsed)])
            for source, target, attrs in memory.records.edges(memory.key, memory.seq):
                memory.graph.add_edge(source, target, **json.loads(attrs))
            memory.seq = user.seq
            self.index_sync.indexed_through = user.indexed_seq
            memory.vectors.connection.ensure_fresh(memory.key, memory.seq)
            return True

    def export(self) -> dict:
        """Everything about this memory as JSON-able data (node-link graph and audit log)."""
        memory = self.memory
        with memory.lock:
            return {
                "user_id": memory.user_id,
                "graph": nx.node_link_data(memory.graph, **NODE_LINK),
                "audit": [e.model_dump(mode="json") for e in memory.read_audit()],
            }

    # ------------------------------------------------------------------ writing
    def commit_rows(self) -> CommitRows:
        """The rows of the staged writes."""
        staged = self.transaction.staged
        graph = self.memory.graph
        nodes = graph.nodes
        rows = CommitRows(messages=list(staged.messages))
        for node_id, (order, words) in staged.new.items():
            rows.nodes.append((node_id, order, row_json(nodes[node_id]), stored_words(words)))
        for node_id in staged.changed:
            rows.nodes.append((node_id, self.memory.model.order[node_id], row_json(nodes[node_id]), ""))
        rows.edges = [(s, t, row_json(graph.edges[s, t])) for s, t in staged.edges]
        rows.events = [(e.node_id, e.timestamp.timestamp(), e.model_dump_json()) for e in staged.events]
        return rows

    def write_commit(self) -> None:
        """Store the staged rows in one transaction; the memory's `seq` becomes the commit's."""
        memory = self.memory
        memory.vectors.connection.ensure_fresh(memory.key, memory.seq)
        memory.seq = memory.records.commit(
            memory.key, memory.user_id, self.commit_rows(), indexed_seq=self.index_sync.indexed_through
        )
        memory.vectors.connection.advance(memory.key, memory.seq)
