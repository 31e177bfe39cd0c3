"""The weighted knowledge graph of one user: what the algorithms read and write.

`WeightedKnowledgeGraph` is the one interface to a user's long-term memory. It holds the
graph itself (`pcm.world.graph_model`: a NetworkX DiGraph and the lookups kept beside it) and
answers the reads; every other job is done by a small collaborator it owns, one module each:

- `pcm.world.graph_writes`: new memories, links, weight changes, each staged and audited;
- `pcm.world.transaction`: the staged writes and the turn's undo log (`begin`, `rollback`,
  `fence`);
- `pcm.world.persistence`: loading from the graph store (`pcm.world.records`), `refresh`,
  writing a commit's rows, `export`;
- `pcm.world.index_sync`: the user's vector index (`pcm.world.vectors`), which holds only
  committed memories and is written after the commit, and its repair;
- `pcm.world.graph_search`: dense, lexical, by-script and cosine search;
- `pcm.world.graph_statistics`: what the layers above read about the memory as a whole.

Collaborators rather than mixins: each keeps its own state (the undo log, the indexed commit,
the statistics' caches) behind a few methods, so what a job touches can be read in its module,
while callers keep one object with the same methods as before.

Writes outside a turn (bulk loading, migrations, tests) are staged the same way as a turn's
and written by `save()`. Nothing is deleted: weights move, and a memory whose weight falls
below the dormant floor is left out of default retrieval but stays stored and queryable.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterable, Mapping
from datetime import datetime

import numpy as np

from pcm.models import RETRIEVABLE_TYPES, MemoryChange, MemoryEdge, MemoryNode, NodeType
from pcm.world.embeddings import Embedder
from pcm.world.graph_model import GraphModel
from pcm.world.graph_search import GraphSearch
from pcm.world.graph_statistics import GraphStatistics
from pcm.world.graph_writes import GraphWrites
from pcm.world.index_sync import AUTO_REINDEX_LIMIT, IndexSync
from pcm.world.persistence import GraphPersistence
from pcm.world.records import GraphRecords
from pcm.world.transaction import Transaction
from pcm.world.vectors import VectorIndex

logger = logging.getLogger(__name__)


def user_key(user_id: str) -> str:
    """A storage key for a user id: safe as a folder and Chroma collection name, whatever the id."""
    return "u-" + hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:40]


class WeightedKnowledgeGraph:
    """Long-term memory of one user."""

    def __init__(
        self,
        user_id: str,
        key: str,
        records: GraphRecords,
        vectors: VectorIndex,
        embedder: Embedder,
        dormant_floor: float = 0.05,
        context_weight: float = 0.5,
        reindex_limit: int | None = AUTO_REINDEX_LIMIT,
    ):
        self.user_id = user_id
        #: how many missing vectors `check_index` rebuilds at open (None: all)
        self.reindex_limit = reindex_limit
        self.context_weight = context_weight
        self.key = key
        self.records = records
        self.vectors = vectors
        self.embedder = embedder
        self.model = GraphModel(dormant_floor)
        # the model's graph and lexical indexes, which views (`as_of`) and callers read directly
        self.graph = self.model.graph
        self.lexical = self.model.lexical
        self.context_lexical = self.model.context_lexical
        self.lock = threading.RLock()
        #: the last commit this copy has loaded or written
        self.seq = 0
        #: how many memories the vector index lacked when this memory was opened (`check_index`)
        self.reindexed_at_open = 0
        self._transaction = Transaction(user_id)
        self._index = IndexSync(self, self._transaction)
        self._persistence = GraphPersistence(self, self._transaction, self._index)
        self._writes = GraphWrites(self, self._transaction)
        self._search = GraphSearch(self, self._transaction, self._index)
        self._statistics = GraphStatistics(self.model, self.lock)
        self._persistence.load()

    @property
    def dormant_floor(self) -> float:
        return self.model.dormant_floor

    # ------------------------------------------------------------------ reading
    def __len__(self) -> int:
        return self.graph.number_of_nodes()

    def __contains__(self, node_id: str) -> bool:
        return node_id in self.graph

    def node(self, node_id: str) -> MemoryNode:
        if node_id not in self.graph:
            raise KeyError(f"no memory with id {node_id!r}")
        return MemoryNode.model_validate(self.graph.nodes[node_id])

    def attrs(self, node_id: str) -> Mapping:
        """A node's stored attributes (JSON values: "weight", "type", "domain", ...), read-only."""
        if node_id not in self.graph:
            raise KeyError(f"no memory with id {node_id!r}")
        return self.graph.nodes[node_id]

    def weight(self, node_id: str) -> float:
        return self.attrs(node_id)["weight"]

    def nodes(self, types: Iterable[NodeType] | None = None, include_dormant: bool = True) -> list[MemoryNode]:
        """The memories (of the given types), oldest first (a memory whose type changed counts
        from the change); with one type this reads only that type's nodes, not the whole graph."""
        wanted = {NodeType(t).value for t in types} if types else None
        with self.lock:
            if wanted is not None and len(wanted) == 1:
                ids = list(self.model.by_type[next(iter(wanted))])
            else:
                ids = [i for i, a in self.graph.nodes(data=True) if wanted is None or a["type"] in wanted]
            attrs = self.graph.nodes
            return [
                MemoryNode.model_validate(attrs[i])
                for i in ids
                if include_dormant or attrs[i]["weight"] >= self.dormant_floor
            ]

    def contents(self, node_type: NodeType) -> list[tuple[str, str]]:
        """(id, content) of every memory of one type, oldest first, read without building its nodes: the
        entity names a search reads at every size (`pcm.world.answer_types`)."""
        with self.lock:
            nodes = self.graph.nodes
            return [(i, nodes[i]["content"]) for i in self.model.by_type[NodeType(node_type).value]]

    def is_dormant(self, node: MemoryNode) -> bool:
        return node.weight < self.dormant_floor

    def edges(self) -> list[MemoryEdge]:
        return [MemoryEdge.model_validate(attrs) for _, _, attrs in self.graph.edges(data=True)]

    def insertion_order(self, node_id: str) -> int:
        """The memory's place in the order memories were written (0 first)."""
        return self.model.order[node_id]

    def retrievable_count(self) -> int:
        """How many memories are retrieved by similarity (those the vector index holds)."""
        with self.lock:
            return self.model.retrievable_count()

    def in_edges(self, node_id: str, relation: str | None = None) -> list[tuple[str, Mapping]]:
        """(source, edge attributes) of the edges into `node_id`, optionally of one relation."""
        return [(s, a) for s, _, a in self.graph.in_edges(node_id, data=True) if relation in (None, a["relation"])]

    def out_edges(self, node_id: str, relation: str | None = None) -> list[tuple[str, Mapping]]:
        """(target, edge attributes) of the edges out of `node_id`, optionally of one relation."""
        return [(t, a) for _, t, a in self.graph.out_edges(node_id, data=True) if relation in (None, a["relation"])]

    def neighbours(self, node_id: str) -> list[tuple[str, MemoryEdge]]:
        """Both directions' 1-hop neighbours, strongest edge first."""
        found: dict[str, MemoryEdge] = {}
        for _, target, attrs in self.graph.out_edges(node_id, data=True):
            found[target] = MemoryEdge.model_validate(attrs)
        for source, _, attrs in self.graph.in_edges(node_id, data=True):
            edge = MemoryEdge.model_validate(attrs)
            if source not in found or edge.weight > found[source].weight:
                found[source] = edge
        return sorted(found.items(), key=lambda item: -item[1].weight)

    def find_entity(self, name: str) -> MemoryNode | None:
        node_id = self.entity_id(name)
        return self.node(node_id) if node_id in self.graph else None

    @staticmethod
    def entity_id(name: str) -> str:
        return "e-" + hashlib.sha1(name.strip().lower().encode("utf-8")).hexdigest()[:12]

    def history(self, node_id: str) -> list[MemoryChange]:
        """Every audit event of one memory, oldest first (committed and staged)."""
        events = [MemoryChange.model_validate_json(e) for e in self.records.history(self.key, node_id)]
        return events + [e for e in self._transaction.staged.events if e.node_id == node_id]

    def read_audit(self) -> list[MemoryChange]:
        """The whole audit log, oldest first (committed and staged)."""
        return [MemoryChange.model_validate_json(e) for e in self.records.audit(self.key)] + list(
            self._transaction.staged.events
        )

    def has_message(self, message_id: str) -> bool:
        """Whether a message with this id was stored (committed, or staged in this turn)."""
        return message_id in self._transaction.staged.messages or self.records.has_message(self.key, message_id)

    def message_ids(self, prefix: str) -> list[str]:
        """The ids of stored messages (committed, or staged in this turn) that start with `prefix`."""
        return [
            *self.records.message_ids(self.key, prefix),
            *(m for m in self._transaction.staged.messages if m.startswith(prefix)),
        ]

    def as_of(self, moment: datetime):
        """A read-only view of this memory as it stood at `moment` (see `pcm.world.as_of`)."""
        from pcm.world.as_of import MemoryAsOf

        return MemoryAsOf(self, moment)

    def export(self) -> dict:
        """Everything about this memory as JSON-able data (node-link graph and audit log)."""
        return self._persistence.export()

    # ------------------------------------------------------------------ search (pcm.world.graph_search)
    def dense_search(
        self,
        query_vector: np.ndarray,
        n: int,
        types: Iterable[NodeType] = RETRIEVABLE_TYPES,
        include_dormant: bool = False,
    ) -> list[tuple[str, float]]:
        """(node id, cosine similarity) of the nearest memories, best first."""
        return self._search.dense_search(query_vector, n, types, include_dormant)

    def lexical_search(self, query: str, n: int, include_dormant: bool = False) -> dict[str, float]:
        """Lexical evidence in (0, 1] for the best `n` matches (BM25, own text and text in context)."""
        return self._search.lexical_search(query, n, include_dormant)

    def latest_in_script(self, cjk: bool, n: int, include_dormant: bool = False) -> list[str]:
        """The ids of the latest `n` retrievable memories written in CJK characters (`cjk`) or not."""
        return self._search.latest_in_script(cjk, n, include_dormant)

    def timed_search(self, intervals, reach_days: float, n: int, include_dormant: bool = False) -> list[str]:
        """The ids of at most `n` memories from the time a query asks about (`pcm.world.dates`)."""
        return self._search.timed_search(intervals, reach_days, n, include_dormant)

    def years(self) -> range:
        """The years this memory's times span (its time index)."""
        with self.lock:
            return self.model.years()

    def cosine(self, query_vector: np.ndarray, node_ids: list[str]) -> dict[str, float]:
        """Cosine similarity of the query to given memories."""
        return self._search.cosine(query_vector, node_ids)

    # ------------------------------------------------------------------ statistics (pcm.world.graph_statistics)
    def speakers(self) -> list[str]:
        """Everyone whose words this memory holds."""
        return self._statistics.speakers()

    def informative_words(self, words: Iterable[str], max_share: float = 0.05) -> set[str]:
        """The words in at most `max_share` of the memories (at least 2)."""
        return self._statistics.informative_words(words, max_share)

    def domain_agreement(self) -> float:
        """ι of this memory over its latest facts (`pcm.formulas.domain_agreement`)."""
        return self._statistics.domain_agreement()

    def router_posteriors(self) -> list[list[float]]:
        """The router's P(low, medium, high) of the turns that stated the latest facts."""
        return self._statistics.router_posteriors()

    # ------------------------------------------------------------------ writing (pcm.world.graph_writes)
    def add_node(
        self,
        node: MemoryNode,
        *,
        reason: str,
        agent: str,
        turn: int | None = None,
        thread_id: str | None = None,
        embedding: np.ndarray | None = None,
    ) -> MemoryChange:
        """Store a new memory and audit its creation (written by the next commit). `embedding`,
        if given, is used instead of embedding the content (bulk loads and migrations)."""
        return self._writes.add_node(
            node, reason=reason, agent=agent, turn=turn, thread_id=thread_id, embedding=embedding
        )

    def add_edge(self, edge: MemoryEdge) -> None:
        """Link two stored memories (replacing the link between them, if any)."""
        self._writes.add_edge(edge)

    def link_days(self) -> int:
        """Link a store written before day nodes (it has memories but no day) to its days
        (`GraphWrites.link_days`), saved; returns how many memories it linked."""
        if self.model.by_type[NodeType.DAY.value] or not self.retrievable_count():
            return 0
        linked = self._writes.link_days(agent="migration")
        self.save()
        logger.info("linked %d memories of %s to their days", linked, self.key)
        return linked

    def update_node(
        self,
        node_id: str,
        *,
        weight: float | None = None,
        type: NodeType | None = None,
        now: datetime | None = None,
        reason: str,
        agent: str,
        turn: int | None = None,
        thread_id: str | None = None,
        decayed: bool = False,
    ) -> MemoryChange:
        """Move a memory's weight (and optionally its type), refresh its timestamps, audit it."""
        return self._writes.update_node(
            node_id,
            weight=weight,
            type=type,
            now=now,
            reason=reason,
            agent=agent,
            turn=turn,
            thread_id=thread_id,
            decayed=decayed,
        )

    def stage_message(self, message_id: str) -> None:
        """Record that the message with this id is stored by this turn (idempotent ingestion)."""
        self._writes.stage_message(message_id)

    # ------------------------------------------------------------------ turns (pcm.world.transaction)
    def begin(self) -> None:
        """Start a turn (the store holds the user's lock): load what others committed, repair the
        vector index if a crash left it behind, and start the undo log."""
        self.refresh()
        if self._index.indexed_through < self.seq:
            self.repair_index()
        with self.lock:
            self._transaction.begin()

    @property
    def in_turn(self) -> bool:
        return self._transaction.in_turn

    @property
    def has_uncommitted(self) -> bool:
        return bool(self._transaction.staged)

    def fence(self) -> None:
        """Refuse writes until the next turn begins (a turn that outlived turn_timeout was rolled
        back; its run may still be going and must not write outside it)."""
        self._transaction.fence()

    def rollback(self) -> None:
        """Undo every write of the open turn, newest first; nothing of it remains."""
        with self.lock:
            self._transaction.rollback(self.model)

    def embed_staged(self) -> None:
        """Embed the new memories staged for the next commit. The store calls it before it takes
        the commit lock, which readers of other processes wait for: `commit` would otherwise
        embed them holding it."""
        self._index.embed_staged()

    def commit(self) -> int | None:
        """Write the staged rows in one transaction, then their vectors; ends the open turn.
        Returns the commit's sequence number (None when nothing was staged)."""
        with self.lock:
            if not self._transaction.staged:
                self._transaction.end()
                return None
            entries = self._index.staged_entries()
            previous = self.seq
            self._persistence.write_commit()
            self._transaction.committed()
        self._index.write_committed(entries, previous)
        return self.seq

    def save(self) -> None:
        """Commit writes made outside a turn (the bulk-load path: add_node(...) then save())."""
        self.commit()

    # ------------------------------------------------------------------ storage (persistence, index_sync)
    def refresh(self) -> bool:
        """Load what another process committed since this copy was loaded; True if anything was."""
        return self._persistence.refresh()

    def repair_index(self) -> int:
        """Re-write the vectors of every commit after the last one known to be indexed (after a
        crash between a commit and its vector writes); returns how many memories it re-wrote."""
        return self._index.repair_index()

    def check_index(self) -> int:
        """Rebuild the vectors the index lacks, up to `reindex_limit` (at open); returns how many
        it added (`IndexSync.check_index` says why and what it costs)."""
        return self._index.check_index()

    def reconcile_index(self, remove_extra: bool = True) -> tuple[int, int]:
        """Make the vector index hold exactly the retrievable memories (a full check, for `pcm
        repair`); returns how many entries it removed and how many it added."""
        return self._index.reconcile_index(remove_extra)
