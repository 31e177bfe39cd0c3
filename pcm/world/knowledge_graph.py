"""The weighted knowledge graph of one user: a NetworkX DiGraph mirrored in a Chroma collection.

Every write goes to both: to the graph at once, to the vector index in one batch per
turn (pending writes are flushed before any search and on save, so a search never sees
a stale index, and a turn costs one Chroma call instead of one per change). Nothing is
deleted: weights move, and a memory whose weight falls below the dormant floor is left
out of default retrieval but stays stored and queryable. The graph is saved as node-link
JSON (atomically: temp file, fsync, rename) beside an append-only audit log of every
weight change; Chroma persists itself and is reconciled against the graph on load, so an
interrupted turn cannot leave them apart.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

import bm25s
import networkx as nx
import numpy as np

from pcm.models import MemoryChange, MemoryEdge, MemoryNode, NodeType, utcnow
from pcm.world.embeddings import Embedder
from pcm.world.representation import context_text, index_vectors, own_text
from pcm.world.text import content_words

logger = logging.getLogger(__name__)
logging.getLogger("bm25s").setLevel(logging.WARNING)

RETRIEVABLE_TYPES = (NodeType.FACT, NodeType.HYPOTHESIS)
#: node-link JSON layout, with key names that do not collide with the records' own
#: attributes (nodes carry "id", edges carry "source" and "target")
NODE_LINK = {"edges": "edges", "name": "node_key", "source": "from_key", "target": "to_key"}


def user_key(user_id: str) -> str:
    """A storage key for a user id: safe as a folder and Chroma collection name, whatever the id."""
    return "u-" + hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:40]


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


def _epoch(moment: datetime) -> float:
    return moment.timestamp()


class WeightedKnowledgeGraph:
    """Long-term memory of one user."""

    def __init__(self, user_id: str, folder: Path, collection, embedder: Embedder, dormant_floor: float = 0.05,
                 context_weight: float = 0.5):
        self.user_id = user_id
        self.context_weight = context_weight
        self.folder = Path(folder)
        self.collection = collection
        self.embedder = embedder
        self.dormant_floor = dormant_floor
        self.graph = nx.DiGraph()
        self.lock = threading.RLock()
        self._pending_audit: list[MemoryChange] = []
        self._lexical: dict[str, bm25s.BM25 | None] = {}
        self._lexical_ids: list[str] = []
        self._document_frequency: Counter[str] = Counter()
        self._speakers: list[str] = []
        self._lexical_dirty = True
        self._unindexed: dict[str, None] = {}
        self._stale_metadata: dict[str, None] = {}
        self._load()

    # ------------------------------------------------------------------ paths and loading
    @property
    def graph_path(self) -> Path:
        return self.folder / "graph.json"

    @property
    def audit_path(self) -> Path:
        return self.folder / "audit.jsonl"

    def _load(self) -> None:
        if self.graph_path.exists():
            data = json.loads(self.graph_path.read_text(encoding="utf-8"))
            self.graph = nx.node_link_graph(data, directed=True, **NODE_LINK)
            for _, attrs in self.graph.nodes(data=True):
                MemoryNode.model_validate(attrs)
        self._reconcile_index()

    def _reconcile_index(self) -> None:
        """Make the Chroma mirror hold exactly the graph's nodes (repairs an interrupted turn)."""
        indexed = set(self.collection.get(include=[])["ids"]) if self.collection.count() else set()
        stored = set(self.graph.nodes)
        extra = sorted(indexed - stored)
        if extra:
            logger.warning("removing %d index entries with no graph node", len(extra))
            self.collection.delete(ids=extra)
        missing = [self.node(i) for i in sorted(stored - indexed)]
        if missing:
            logger.warning("re-indexing %d graph nodes missing from the vector index", len(missing))
            self._index(missing)
        stale = [self.node(i) for i in sorted(stored & indexed)]
        if stale:
            self._index_metadata(stale)

    # ------------------------------------------------------------------ reading
    def __len__(self) -> int:
        return self.graph.number_of_nodes()

    def __contains__(self, node_id: str) -> bool:
        return node_id in self.graph

    def node(self, node_id: str) -> MemoryNode:
        if node_id not in self.graph:
            raise KeyError(f"no memory with id {node_id!r}")
        return MemoryNode.model_validate(self.graph.nodes[node_id])

    def nodes(self, types: Iterable[NodeType] | None = None, include_dormant: bool = True) -> list[MemoryNode]:
        wanted = set(types) if types else None
        out = []
        for _, attrs in self.graph.nodes(data=True):
            if wanted and NodeType(attrs["type"]) not in wanted:
                continue
            if not include_dormant and attrs["weight"] < self.dormant_floor:
                continue
            out.append(MemoryNode.model_validate(attrs))
        return out

    def is_dormant(self, node: MemoryNode) -> bool:
        return node.weight < self.dormant_floor

    def edges(self) -> list[MemoryEdge]:
        return [MemoryEdge.model_validate(attrs) for _, _, attrs in self.graph.edges(data=True)]

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
        """Every audit event of one memory, oldest first (saved and not yet saved)."""
        events = [e for e in self.read_audit() if e.node_id == node_id]
        return events + [e for e in self._pending_audit if e.node_id == node_id]

    def read_audit(self) -> list[MemoryChange]:
        """The saved audit log; a line cut short by a crash is skipped."""
        if not self.audit_path.exists():
            return []
        events = []
        for line in self.audit_path.read_text(encoding="utf-8").splitlines():
            try:
                events.append(MemoryChange.model_validate_json(line))
            except ValueError:
                logger.warning("skipping an unreadable audit line in %s", self.audit_path)
        return events

    # ------------------------------------------------------------------ search
    def dense_search(self, query_vector: np.ndarray, n: int,
                     types: Iterable[NodeType] = RETRIEVABLE_TYPES,
                     include_dormant: bool = False) -> list[tuple[str, float]]:
        """(node id, cosine similarity) of the nearest memories in the vector index."""
        self.flush_index()
        count = self.collection.count()
        if count == 0 or n <= 0:
            return []
        clauses = [{"type": {"$in": [t.value for t in types]}}]
        if not include_dormant:
            clauses.append({"dormant": False})
        where = clauses[0] if len(clauses) == 1 else {"$and": clauses}
        result = self.collection.query(query_embeddings=[query_vector.tolist()], n_results=min(n, count),
                                       where=where, include=["distances", "metadatas"])
        # the index ranks by cosine; a memory's vector is not unit length (see representation), so the
        # similarity is that cosine times the vector's norm: the dot product with the unit query
        return [(i, (1.0 - float(d)) * float((meta or {}).get("norm", 1.0)))
                for i, d, meta in zip(result["ids"][0], result["distances"][0], result["metadatas"][0])]

    def _refresh_lexical(self) -> None:
        """Rebuild the BM25 indexes (own text, contextual text) and the document frequencies after
        memories were added."""
        if not self._lexical_dirty:
            return
        nodes = [MemoryNode.model_validate(a) for _, a in self.graph.nodes(data=True)
                 if NodeType(a["type"]) in RETRIEVABLE_TYPES]
        nodes = [n for n in nodes if content_words(n.content)]
        self._lexical_ids = [n.id for n in nodes]
        self._document_frequency = Counter(word for n in nodes for word in set(content_words(n.content)))
        self._speakers = sorted({n.source.speaker for n in nodes if n.source.speaker})
        self._lexical = {}
        for name, text in (("own", own_text), ("context", context_text)):
            corpus = [content_words(text(n)) or ["_"] for n in nodes]
            self._lexical[name] = None
            if corpus:
                self._lexical[name] = bm25s.BM25()
                self._lexical[name].index(corpus, show_progress=False)
        self._lexical_dirty = False

    def speakers(self) -> list[str]:
        """Everyone whose words this memory holds (the speakers of its retrievable memories)."""
        self._refresh_lexical()
        return self._speakers

    def informative_words(self, words: Iterable[str], max_share: float = 0.05) -> set[str]:
        """The words that few memories contain: in at most `max_share` of them (at least 2), so a
        word shared with a memory says something about what it is about ("FastAPI", "pottery"),
        unlike words that half the conversation uses ("great", "thanks")."""
        self._refresh_lexical()
        limit = max(2.0, max_share * len(self._lexical_ids))
        return {w for w in words if self._document_frequency.get(w, 0) <= limit}

    def lexical_search(self, query: str, n: int, include_dormant: bool = False) -> dict[str, float]:
        """Lexical evidence in [0, 1] for the best matches: BM25 over each memory's own text and over its
        text in context, each divided by the query's best score, mixed with `context_weight`."""
        terms = content_words(query)
        if not terms:
            return {}
        self._refresh_lexical()
        mixed = None
        for name, weight in (("own", 1.0 - self.context_weight), ("context", self.context_weight)):
            index = self._lexical.get(name)
            known = [t for t in terms if index is not None and t in index.vocab_dict]
            if not known or weight <= 0:
                continue
            scores = np.asarray(index.get_scores(known), dtype=float)
            best = scores.max()
            if best > 0:
                mixed = (0 if mixed is None else mixed) + weight * scores / best
        if mixed is None:
            return {}
        out: dict[str, float] = {}
        for index in np.argsort(-mixed):
            if mixed[index] <= 0 or len(out) >= n:
                break
            node_id = self._lexical_ids[index]
            if include_dormant or self.graph.nodes[node_id]["weight"] >= self.dormant_floor:
                out[node_id] = float(mixed[index])
        return out

    def cosine(self, query_vector: np.ndarray, node_ids: list[str]) -> dict[str, float]:
        """Cosine similarity of the query to given memories (vectors read from the index)."""
        if not node_ids:
            return {}
        self.flush_index()
        got = self.collection.get(ids=node_ids, include=["embeddings"])
        return {i: float(np.dot(query_vector, np.asarray(v))) for i, v in zip(got["ids"], got["embeddings"])}

    # ------------------------------------------------------------------ writing
    def _metadata(self, node: MemoryNode) -> dict:
        return {
            "type": node.type.value,
            "domain": node.domain or "",
            "weight": node.weight,
            "dormant": node.weight < self.dormant_floor,
            "created_at": _epoch(node.created_at),
            "updated_at": _epoch(node.updated_at),
        }

    def _index(self, nodes: list[MemoryNode]) -> None:
        vectors = index_vectors(self.embedder.encode, nodes, self.context_weight)
        norms = np.linalg.norm(vectors, axis=1)
        self.collection.upsert(ids=[n.id for n in nodes], embeddings=vectors.tolist(),
                               documents=[n.content for n in nodes],
                               metadatas=[{**self._metadata(n), "norm": float(norm)} for n, norm in zip(nodes, norms)])

    def _index_metadata(self, nodes: list[MemoryNode]) -> None:
        self.collection.update(ids=[n.id for n in nodes], metadatas=[self._metadata(n) for n in nodes])

    def flush_index(self) -> None:
        """Send the pending writes to the vector index: new memories (embedded in one batch),
        then changed metadata (weights, types, dormancy)."""
        with self.lock:
            if self._unindexed:
                self._index([self.node(i) for i in self._unindexed])
            stale = [i for i in self._stale_metadata if i not in self._unindexed]
            if stale:
                self._index_metadata([self.node(i) for i in stale])
            self._unindexed.clear()
            self._stale_metadata.clear()

    def _record(self, change: MemoryChange) -> MemoryChange:
        self._pending_audit.append(change)
        return change

    def add_node(self, node: MemoryNode, *, reason: str, agent: str, turn: int | None = None,
                 thread_id: str | None = None) -> MemoryChange:
        """Store a new memory in the graph and the vector index, and audit its creation."""
        with self.lock:
            if node.id in self.graph:
                raise ValueError(f"memory {node.id!r} already exists")
            self.graph.add_node(node.id, **node.model_dump(mode="json"))
            self._unindexed[node.id] = None
            if NodeType(node.type) in RETRIEVABLE_TYPES:
                self._lexical_dirty = True
            return self._record(MemoryChange(turn=turn, thread_id=thread_id, node_id=node.id, content=node.content,
                                             old_weight=None, new_weight=node.weight, reason=reason, agent=agent,
                                             timestamp=node.created_at))

    def add_edge(self, edge: MemoryEdge) -> None:
        with self.lock:
            for end in (edge.source, edge.target):
                if end not in self.graph:
                    raise KeyError(f"cannot link unknown memory {end!r}")
            self.graph.add_edge(edge.source, edge.target, **edge.model_dump(mode="json"))

    def update_node(self, node_id: str, *, weight: float | None = None, type: NodeType | None = None,
                    now: datetime | None = None, reason: str, agent: str, turn: int | None = None,
                    thread_id: str | None = None, decayed: bool = False) -> MemoryChange:
        """Move a memory's weight (and optionally its type), refresh its timestamps, audit it."""
        with self.lock:
            node = self.node(node_id)
            now = now or utcnow()
            old = node.weight
            changes: dict = {"updated_at": now}
            if weight is not None:
                changes["weight"] = min(1.0, max(0.0, weight))
            if type is not None:
                changes["type"] = type
            if decayed:
                changes["decayed_at"] = now
                changes.pop("updated_at")
            else:
                changes["last_accessed"] = now
            updated = node.model_copy(update=changes)
            self.graph.nodes[node_id].update(updated.model_dump(mode="json"))
            self._stale_metadata[node_id] = None
            if type is not None:
                self._lexical_dirty = True
            return self._record(MemoryChange(turn=turn, thread_id=thread_id, node_id=node_id, content=node.content,
                                             old_weight=old, new_weight=updated.weight, reason=reason, agent=agent,
                                             timestamp=now))

    def save(self) -> None:
        """Flush the vector index, append pending audit events, then atomically rewrite the graph file."""
        with self.lock:
            self.flush_index()
            self.folder.mkdir(parents=True, exist_ok=True)
            if self._pending_audit:
                with self.audit_path.open("a", encoding="utf-8") as handle:
                    for event in self._pending_audit:
                        handle.write(event.model_dump_json() + "\n")
                    handle.flush()
                    os.fsync(handle.fileno())
                self._pending_audit.clear()
            meta = {"user_id": self.user_id}
            atomic_write_text(self.folder / "user.json", json.dumps(meta, ensure_ascii=False))
            data = nx.node_link_data(self.graph, **NODE_LINK)
            atomic_write_text(self.graph_path, json.dumps(data, ensure_ascii=False))

    def export(self) -> dict:
        """Everything about this memory as JSON-able data (node-link graph and audit log)."""
        with self.lock:
            return {
                "user_id": self.user_id,
                "graph": nx.node_link_data(self.graph, **NODE_LINK),
                "audit": [e.model_dump(mode="json") for e in self.read_audit() + self._pending_audit],
            }
