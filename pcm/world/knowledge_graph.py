"""The weighted knowledge graph of one user: what the algorithms read and write.

A NetworkX DiGraph holds the nodes and edges in memory; the algorithms use it. It is loaded
from the graph store (`pcm.world.records`), never rewritten to it: every write is staged and
a commit writes only the staged rows, in one transaction. Beside it, an incremental BM25
index over the memories' words (`pcm.world.lexical`) and the user's vector index
(`pcm.world.vectors`), which holds only committed memories and is written after the commit.

A turn is a transaction: `begin` (called by the store with the user's lock held) starts an
undo log, every write records how to undo itself, and `rollback` puts the graph, the lexical
index and the staged rows back as they were, so a failed turn leaves nothing in memory and
nothing on disk. Writes outside a turn (bulk loading, migrations, tests) are staged the same
way and written by `save()`.

Nothing is deleted: weights move, and a memory whose weight falls below the dormant floor is
left out of default retrieval but stays stored and queryable.
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import os
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from pathlib import Path

import networkx as nx
import numpy as np
import orjson

from pcm.formulas import domain_agreement
from pcm.models import RETRIEVABLE_TYPES, MemoryChange, MemoryEdge, MemoryNode, NodeType, utcnow
from pcm.world.embeddings import Embedder
from pcm.world.lexical import LexicalIndex
from pcm.world.records import CommitRows, GraphRecords
from pcm.world.representation import context_text, index_vectors, own_text
from pcm.world.text import has_cjk, lexical_terms, tokenizer_fingerprint
from pcm.world.vectors import IncompleteIndexError, VectorIndex, VectorIndexError, index_failure

logger = logging.getLogger(__name__)

_RETRIEVABLE_VALUES = frozenset(t.value for t in RETRIEVABLE_TYPES)
#: in a memory's stored words, between the words of its own dated text and those of its text in
#: context (`pcm.world.representation`); no content word contains it
WORDS_SEPARATOR = "||"
#: the layout of stored words: stored words of another layout are made again when loaded
WORDS_LAYOUT = "own||context"
#: node-link JSON layout, with key names that do not collide with the records' own
#: attributes (nodes carry "id", edges carry "source" and "target")
NODE_LINK = {"edges": "edges", "name": "node_key", "source": "from_key", "target": "to_key"}
#: how many vectors one call to the vector index carries at most
VECTOR_BATCH = 2000
#: a commit with more vectors than this records at once that they are written (the store
#: otherwise learns it with the next commit, and a reopen re-writes the last commit's vectors)
BIG_COMMIT = 64
#: the latest facts over which `domain_agreement` is measured
AGREEMENT_WINDOW = 1000
#: at most this many memories missing from the vector index are re-embedded when a memory is
#: opened (`check_index`); more, and opening refuses, naming `pcm repair`
AUTO_REINDEX_LIMIT = 1000


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


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass
class StagedWrites:
    """What the next commit writes: new nodes (with their insertion order and words), changed
    nodes, edges, audit events, ingested message ids, and the vectors to (re)write."""

    new: dict[str, tuple[int, list[str]]] = field(default_factory=dict)
    changed: dict[str, None] = field(default_factory=dict)
    edges: dict[tuple[str, str], None] = field(default_factory=dict)
    events: list[MemoryChange] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    reindex: dict[str, None] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.new or self.changed or self.edges or self.events or self.messages)

    def copy(self) -> "StagedWrites":
        return StagedWrites(dict(self.new), dict(self.changed), dict(self.edges), list(self.events),
                            list(self.messages), dict(self.reindex), dict(self.vectors))


class WeightedKnowledgeGraph:
    """Long-term memory of one user."""

    def __init__(self, user_id: str, key: str, records: GraphRecords, vectors: VectorIndex, embedder: Embedder,
                 dormant_floor: float = 0.05, context_weight: float = 0.5,
                 reindex_limit: int | None = AUTO_REINDEX_LIMIT):
        self.user_id = user_id
        #: how many missing vectors `check_index` rebuilds at open (None: all)
        self.reindex_limit = reindex_limit
        self.context_weight = context_weight
        self.key = key
        self.records = records
        self.vectors = vectors
        self.embedder = embedder
        self.dormant_floor = dormant_floor
        self.graph = nx.DiGraph()
        self.lexical = LexicalIndex()            # own dated text; also the document frequencies
        self.context_lexical = LexicalIndex()    # text in context, same documents in the same order
        self._speakers: Counter[str] = Counter()
        self.lock = threading.RLock()
        self.seq = 0
        self._indexed_through = 0
        self._by_type: dict[str, dict[str, None]] = {t.value: {} for t in NodeType}
        #: retrievable memories by script (True: Chinese/Japanese/Korean characters), oldest first
        self._by_script: dict[bool, dict[str, None]] = {True: {}, False: {}}
        self._dormant: set[str] = set()
        self._order: dict[str, int] = {}
        self._next_order = 0
        self._staged = StagedWrites()
        self._undo: list[tuple] | None = None
        self._staged_at_begin: StagedWrites | None = None
        self._fenced = False
        self._agreement: tuple[tuple[int, int], float] | None = None
        self._posteriors: tuple[tuple[int, int], list[list[float]]] | None = None
        #: how many memories the vector index lacked when this memory was opened (`check_index`)
        self.reindexed_at_open = 0
        self._load()

    # ------------------------------------------------------------------ loading
    def _load(self) -> None:
        user = self.records.user(self.key)
        if user is None:
            return
        with collection_paused():
            self._load_rows(user)

    def _load_rows(self, user) -> None:
        retokenised = []
        rows = []
        prefix = f"{tokenizer_fingerprint()}:{WORDS_LAYOUT}|"
        for node_id, order, attrs, words in self.records.nodes(self.key):
            attrs = orjson.loads(attrs)
            if words.startswith(prefix):
                words = words[len(prefix):].split()
            else:
                words = self._words_of(attrs)
                retokenised.append(node_id)
            rows.append((node_id, order, attrs, words))
        self._insert_many(rows)
        self.graph.add_edges_from((s, t, orjson.loads(a)) for s, t, a in self.records.edges(self.key))
        self.seq = user.seq
        self._indexed_through = user.indexed_seq
        self.vectors.connection.ensure_fresh(self.key, self.seq)
        if self.records.read_only:   # read as it is: the store cannot take the new words or a repair
            return
        if retokenised:
            logger.info("re-tokenising %d memories of %s for the lexical index", len(retokenised), self.key)
            self.records.update_words(self.key, [(i, self._words_json(self._lexical_words(i))) for i in retokenised])
        self._open_index()

    def _open_index(self) -> None:
        """At open: re-write the vectors a crash left out (`repair_index`), then check that the
        index holds every memory (`check_index`). If the index fails at it because its database
        is damaged, and this process has not used it yet, it is moved aside and rebuilt
        (`ChromaConnection.recover`); otherwise the failure is a `VectorIndexError` naming
        `pcm repair`."""
        connection = self.vectors.connection
        try:
            self.repair_index()
            self.reindexed_at_open = self.check_index()
            return
        except BaseException as error:
            if not index_failure(error) or isinstance(error, IncompleteIndexError):
                raise
            if not connection.recover(error, self.key):
                raise (error if isinstance(error, VectorIndexError) else connection.damaged(error)) from None
        self.repair_index()
        self.reindexed_at_open = self.check_index()

    @staticmethod
    def _words_of(attrs: Mapping, node: MemoryNode | None = None) -> list[str]:
        """The words both lexical indexes need: own dated text, WORDS_SEPARATOR, text in context
        (none for memories not retrieved by similarity). `node`, when the caller has it, spares
        re-validating the attributes."""
        if attrs["type"] not in _RETRIEVABLE_VALUES:
            return []
        node = node or MemoryNode.model_validate(attrs)
        own, context = lexical_terms(own_text(node)), lexical_terms(context_text(node))
        if not own and not context:
            return []
        return [*(own or [WORDS_SEPARATOR + "none"]), WORDS_SEPARATOR, *(context or [WORDS_SEPARATOR + "none"])]

    @staticmethod
    def _split_words(words: list[str]) -> tuple[list[str], list[str]]:
        """(own words, words in context) of stored words."""
        if WORDS_SEPARATOR not in words:
            return words, words
        cut = words.index(WORDS_SEPARATOR)
        return words[:cut], words[cut + 1:]

    def _lexical_words(self, node_id: str) -> list[str]:
        return self._words_of(self.graph.nodes[node_id])

    @staticmethod
    def _words_json(words: list[str]) -> str:
        """Stored words: the tokeniser's fingerprint, then the words (none holds a space)."""
        return f"{tokenizer_fingerprint()}:{WORDS_LAYOUT}|{' '.join(words)}"

    @staticmethod
    def _parse_words(stored: str) -> list[str] | None:
        """The stored words, or None if another tokeniser made them."""
        prefix = f"{tokenizer_fingerprint()}:{WORDS_LAYOUT}|"  # the layout itself holds "|"; `_load_rows` inlines this
        return stored[len(prefix):].split() if stored.startswith(prefix) else None

    def _insert(self, node_id: str, order: int, attrs: dict, words: list[str]) -> None:
        """Put one stored node into the graph and the indexes (refreshing, adding)."""
        self._insert_many([(node_id, order, attrs, words)])

    def _insert_many(self, rows: list[tuple[str, int, dict, list[str]]]) -> None:
        """Put stored nodes into the graph and the indexes, in order (loading)."""
        if not rows:
            return
        self.graph.add_nodes_from((node_id, attrs) for node_id, _, attrs, _ in rows)
        self._order.update((node_id, order) for node_id, order, _, _ in rows)
        self._next_order = max(self._next_order, max(order for _, order, _, _ in rows) + 1)
        by_type, floor = self._by_type, self.dormant_floor
        for node_id, _, attrs, _ in rows:
            kind = attrs["type"]
            by_type[kind][node_id] = None
            if kind in _RETRIEVABLE_VALUES:
                self._by_script[has_cjk(attrs["content"])][node_id] = None
                if attrs["weight"] < floor:
                    self._dormant.add(node_id)
                speaker = (attrs.get("source") or {}).get("speaker")
                if speaker:
                    self._speakers[speaker] += 1
        split = [(node_id, self._split_words(words)) for node_id, _, _, words in rows if words]
        self.lexical.extend([(node_id, own) for node_id, (own, _) in split])
        self.context_lexical.extend([(node_id, context) for node_id, (_, context) in split])

    def _set_attrs(self, node_id: str, attrs: dict) -> None:
        """Replace a node's attributes, keeping the type and dormancy indexes right."""
        current = self.graph.nodes[node_id]
        if current["type"] != attrs["type"]:
            self._by_type[current["type"]].pop(node_id, None)
            self._by_type[attrs["type"]][node_id] = None
        current.clear()
        current.update(attrs)
        if attrs["type"] in _RETRIEVABLE_VALUES and attrs["weight"] < self.dormant_floor:
            self._dormant.add(node_id)
        else:
            self._dormant.discard(node_id)

    def refresh(self) -> bool:
        """Load what another process committed since this copy was loaded; True if anything was."""
        user = self.records.user(self.key)
        if user is None or user.seq == self.seq:
            return False
        with self.lock:
            if self._staged:
                raise RuntimeError(f"memory of {self.user_id!r} changed in another process while this process "
                                   "had uncommitted writes; write under MemoryStore.exclusive(user_id)")
            for node_id, order, attrs, words in self.records.nodes(self.key, self.seq):
                attrs = json.loads(attrs)
                if node_id in self.graph:
                    self._set_attrs(node_id, attrs)
                else:
                    parsed = self._parse_words(words)
                    self._insert(node_id, order, attrs, self._words_of(attrs) if parsed is None else parsed)
            for source, target, attrs in self.records.edges(self.key, self.seq):
                self.graph.add_edge(source, target, **json.loads(attrs))
            self.seq = user.seq
            self._indexed_through = user.indexed_seq
            self.vectors.connection.ensure_fresh(self.key, self.seq)
            return True

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
                ids = list(self._by_type[next(iter(wanted))])
            else:
                ids = [i for i, a in self.graph.nodes(data=True) if wanted is None or a["type"] in wanted]
            attrs = self.graph.nodes
            return [MemoryNode.model_validate(attrs[i]) for i in ids
                    if include_dormant or attrs[i]["weight"] >= self.dormant_floor]

    def is_dormant(self, node: MemoryNode) -> bool:
        return node.weight < self.dormant_floor

    def edges(self) -> list[MemoryEdge]:
        return [MemoryEdge.model_validate(attrs) for _, _, attrs in self.graph.edges(data=True)]

    def insertion_order(self, node_id: str) -> int:
        """The memory's place in the order memories were written (0 first)."""
        return self._order[node_id]

    def in_edges(self, node_id: str, relation: str | None = None) -> list[tuple[str, Mapping]]:
        """(source, edge attributes) of the edges into `node_id`, optionally of one relation."""
        return [(source, attrs) for source, _, attrs in self.graph.in_edges(node_id, data=True)
                if relation is None or attrs["relation"] == relation]

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
        return events + [e for e in self._staged.events if e.node_id == node_id]

    def read_audit(self) -> list[MemoryChange]:
        """The whole audit log, oldest first (committed and staged)."""
        return [MemoryChange.model_validate_json(e) for e in self.records.audit(self.key)] + list(self._staged.events)

    def has_message(self, message_id: str) -> bool:
        """Whether a message with this id was stored (committed, or staged in this turn)."""
        return message_id in self._staged.messages or self.records.has_message(self.key, message_id)

    def message_ids(self, prefix: str) -> list[str]:
        """The ids of stored messages (committed, or staged in this turn) that start with `prefix`."""
        return [*self.records.message_ids(self.key, prefix), *(m for m in self._staged.messages if m.startswith(prefix))]

    def as_of(self, moment: datetime):
        """A read-only view of this memory as it stood at `moment` (see `pcm.world.as_of`)."""
        from pcm.world.as_of import MemoryAsOf

        return MemoryAsOf(self, moment)

    # ------------------------------------------------------------------ search
    def _staged_vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        """Vectors of memories not yet in the vector index (embedded once, kept with the staged rows)."""
        missing = [i for i in ids if i not in self._staged.vectors]
        if missing:
            self._staged.vectors.update(zip(missing, self._embed(missing)))
        return {i: self._staged.vectors[i] for i in ids}

    def dense_search(self, query_vector: np.ndarray, n: int,
                     types: Iterable[NodeType] = RETRIEVABLE_TYPES,
                     include_dormant: bool = False) -> list[tuple[str, float]]:
        """(node id, cosine similarity) of the nearest memories, best first.

        Committed memories come from the vector index (the live collection, and the dormant one
        with `include_dormant`), queried without a metadata filter and filtered here against the
        graph, which also hides what another process indexed but this copy has not loaded yet;
        memories written since the last commit are compared in memory.
        """
        wanted = {NodeType(t).value for t in types} & _RETRIEVABLE_VALUES
        if n <= 0 or not wanted:
            return []
        with self.lock:
            nodes = self.graph.nodes

            def accept(node_id: str) -> bool:
                attrs = nodes.get(node_id)
                return attrs is not None and attrs["type"] in wanted and (
                    include_dormant or attrs["weight"] >= self.dormant_floor)

            pending = [i for i in self._staged.reindex if i in nodes and accept(i)]
            unwanted = sum(len(self._by_type[t]) for t in _RETRIEVABLE_VALUES - wanted)
            fetch = n + unwanted + len(self._staged.reindex)
        where = None
        if unwanted > max(n, 200):
            where = {"type": {"$in": sorted(wanted)}}
            fetch = n + len(self._staged.reindex)
        found = [(i, s) for i, s in self.vectors.query(query_vector, fetch, include_dormant, where)
                 if i not in self._staged.reindex and accept(i)]
        if pending:
            with self.lock:
                staged = self._staged_vectors(pending)
            found += [(i, float(np.dot(query_vector, v))) for i, v in staged.items()]
            found.sort(key=lambda item: -item[1])
        return found[:n]

    def lexical_search(self, query: str, n: int, include_dormant: bool = False) -> dict[str, float]:
        """Lexical evidence in (0, 1] for the best `n` matches: BM25 over each memory's own dated text
        and over its text in context, each divided by the query's best score, mixed with
        `context_weight` (`pcm.formulas.mix`)."""
        terms = lexical_terms(query)
        if not terms:
            return {}
        with self.lock:
            evidence = None
            for index, share in ((self.lexical, 1.0 - self.context_weight), (self.context_lexical, self.context_weight)):
                scores = index.scores(terms) if share > 0 else None
                best = float(scores.max()) if scores is not None and len(scores) else 0.0
                if best > 0:
                    part = share * scores.astype(np.float64) / best
                    evidence = part if evidence is None else evidence + part
            if evidence is None:
                return {}
            nodes, ids = self.graph.nodes, self.lexical.ids
            matched = np.flatnonzero(evidence > 0)
            out: dict[str, float] = {}
            for number in matched[np.argsort(-evidence[matched], kind="stable")]:
                if len(out) >= n:
                    break
                if include_dormant or nodes[ids[number]]["weight"] >= self.dormant_floor:
                    out[ids[number]] = float(evidence[number])
        return out

    def latest_in_script(self, cjk: bool, n: int, include_dormant: bool = False) -> list[str]:
        """The ids of the latest `n` retrievable memories written in Chinese/Japanese/Korean
        characters (`cjk`) or not, newest first."""
        with self.lock:
            found = []
            for node_id in reversed(self._by_script[cjk]):
                if len(found) >= n:
                    break
                if include_dormant or node_id not in self._dormant:
                    found.append(node_id)
            return found

    def speakers(self) -> list[str]:
        """Everyone whose words this memory holds (speakers of its retrievable memories)."""
        with self.lock:
            return [speaker for speaker, count in self._speakers.items() if count > 0]

    def informative_words(self, words: Iterable[str], max_share: float = 0.05) -> set[str]:
        """The words that few memories contain: in at most `max_share` of them (at least 2), so a
        word shared with a memory says something about what it is about ("FastAPI", "pottery"),
        unlike words that half the conversation uses ("great", "thanks")."""
        limit = max(2.0, max_share * len(self.lexical))
        return {w for w in words if self.lexical.document_frequency(w) <= limit}

    def domain_agreement(self) -> float:
        """ι (`pcm.formulas.domain_agreement`) of this memory: how much more often consecutive facts
        of a thread share a domain than chance, over the latest `AGREEMENT_WINDOW` facts (bounded
        cost at any size). Cached until a memory is added or removed."""
        with self.lock:
            key = (len(self.graph), self._next_order)
            if self._agreement is not None and self._agreement[0] == key:
                return self._agreement[1]
            latest = list(islice(reversed(self._by_type[NodeType.FACT.value]), AGREEMENT_WINDOW))[::-1]
            pairs, previous = [], {}
            for node_id in latest:
                attrs = self.graph.nodes[node_id]
                distribution = attrs.get("domain_distribution")
                if not distribution:
                    continue
                thread = (attrs.get("source") or {}).get("thread_id")
                if thread in previous:
                    pairs.append((previous[thread], distribution))
                previous[thread] = distribution
            value = domain_agreement(pairs)
            self._agreement = (key, value)
            return value

    def router_posteriors(self) -> list[list[float]]:
        """The router's class-balanced P(low, medium, high) of the turns that stated the latest
        `AGREEMENT_WINDOW` facts (those that carry one), for the user's own level prior
        (`pcm.formulas.adapted_level_prior`). Cached until a memory is added or removed."""
        with self.lock:
            key = (len(self.graph), self._next_order)
            if self._posteriors is None or self._posteriors[0] != key:
                latest = islice(reversed(self._by_type[NodeType.FACT.value]), AGREEMENT_WINDOW)
                found = [self.graph.nodes[node_id].get("router_posterior") for node_id in latest]
                self._posteriors = (key, [p for p in found if p])
            return self._posteriors[1]

    def cosine(self, query_vector: np.ndarray, node_ids: list[str]) -> dict[str, float]:
        """Cosine similarity of the query to given memories (vectors read from the index)."""
        if not node_ids:
            return {}
        with self.lock:
            pending = [i for i in node_ids if i in self._staged.reindex and i in self.graph]
            staged = self._staged_vectors(pending) if pending else {}
        found = self.vectors.vectors([i for i in node_ids if i not in staged])
        found.update(staged)
        return {i: float(np.dot(query_vector, v)) for i, v in found.items()}

    # ------------------------------------------------------------------ writing
    def fence(self) -> None:
        """Refuse writes until the next turn begins (a turn that outlived turn_timeout was rolled
        back; its run may still be going and must not write outside it)."""
        self._fenced = True

    def _log(self, entry: tuple) -> None:
        if self._fenced:
            raise RuntimeError(f"the turn writing to {self.user_id!r} was rolled back after turn_timeout")
        if self._undo is not None:
            self._undo.append(entry)

    def _record(self, change: MemoryChange) -> MemoryChange:
        self._staged.events.append(change)
        return change

    def add_node(self, node: MemoryNode, *, reason: str, agent: str, turn: int | None = None,
                 thread_id: str | None = None, embedding: np.ndarray | None = None) -> MemoryChange:
        """Store a new memory and audit its creation (written by the next commit). `embedding`,
        if given, is used instead of embedding the content (bulk loads and migrations)."""
        with self.lock:
            if node.id in self.graph:
                raise ValueError(f"memory {node.id!r} already exists")
            attrs = node.model_dump(mode="json")
            words = self._words_of(attrs, node)
            self._log(("node", node.id))
            order = self._next_order
            self._insert(node.id, order, attrs, words)
            self._staged.new[node.id] = (order, words)
            if attrs["type"] in _RETRIEVABLE_VALUES:
                self._staged.reindex[node.id] = None
                if embedding is not None:
                    self._staged.vectors[node.id] = np.asarray(embedding, dtype=np.float32)
            return self._record(MemoryChange(turn=turn, thread_id=thread_id, node_id=node.id, content=node.content,
                                             old_weight=None, new_weight=node.weight, reason=reason, agent=agent,
                                             timestamp=node.created_at, type=node.type))

    def add_edge(self, edge: MemoryEdge) -> None:
        with self.lock:
            for end in (edge.source, edge.target):
                if end not in self.graph:
                    raise KeyError(f"cannot link unknown memory {end!r}")
            previous = self.graph.edges[edge.source, edge.target] if self.graph.has_edge(edge.source, edge.target) \
                else None
            self._log(("edge", edge.source, edge.target, dict(previous) if previous is not None else None))
            self.graph.add_edge(edge.source, edge.target, **edge.model_dump(mode="json"))
            self._staged.edges[(edge.source, edge.target)] = None

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
            previous = dict(self.graph.nodes[node_id])
            was_dormant = node_id in self._dormant
            self._log(("attrs", node_id, previous))
            self._set_attrs(node_id, {**previous, **updated.model_dump(mode="json")})
            if node_id not in self._staged.new:
                self._staged.changed[node_id] = None
            retrievable = self.graph.nodes[node_id]["type"] in _RETRIEVABLE_VALUES
            if retrievable and (type is not None or was_dormant != (node_id in self._dormant)):
                self._staged.reindex[node_id] = None
            return self._record(MemoryChange(turn=turn, thread_id=thread_id, node_id=node_id, content=node.content,
                                             old_weight=old, new_weight=updated.weight, reason=reason, agent=agent,
                                             timestamp=now, type=type))

    def stage_message(self, message_id: str) -> None:
        """Record that the message with this id is stored by this turn (idempotent ingestion)."""
        with self.lock:
            self._log(("message", message_id))
            self._staged.messages.append(message_id)

    # ------------------------------------------------------------------ turns
    def begin(self) -> None:
        """Start a turn (the store holds the user's lock): load what others committed, repair the
        vector index if a crash left it behind, and start the undo log."""
        self.refresh()
        if self._indexed_through < self.seq:
            self.repair_index()
        with self.lock:
            self._fenced = False
            self._undo = []
            self._staged_at_begin = self._staged.copy()

    @property
    def in_turn(self) -> bool:
        return self._undo is not None

    @property
    def has_uncommitted(self) -> bool:
        return bool(self._staged)

    def rollback(self) -> None:
        """Undo every write of the open turn, newest first; nothing of it remains."""
        with self.lock:
            if self._undo is None:
                return
            for entry in reversed(self._undo):
                if entry[0] == "node":
                    node_id = entry[1]
                    attrs = self.graph.nodes[node_id]
                    own, context = self._split_words(self._staged.new[node_id][1])
                    self.lexical.remove_last(node_id, own)
                    self.context_lexical.remove_last(node_id, context)
                    speaker = (attrs.get("source") or {}).get("speaker")
                    if speaker and attrs["type"] in _RETRIEVABLE_VALUES:
                        self._speakers[speaker] -= 1
                    self._by_type[attrs["type"]].pop(node_id, None)
                    self._by_script[has_cjk(attrs["content"])].pop(node_id, None)
                    self._dormant.discard(node_id)
                    self._order.pop(node_id, None)
                    self.graph.remove_node(node_id)
                    self._next_order -= 1
                elif entry[0] == "attrs":
                    self._set_attrs(entry[1], entry[2])
                elif entry[0] == "edge":
                    _, source, target, previous = entry
                    if previous is None:
                        self.graph.remove_edge(source, target)
                    else:
                        self.graph.edges[source, target].clear()
                        self.graph.edges[source, target].update(previous)
            self._staged = self._staged_at_begin or StagedWrites()
            self._undo = None
            self._staged_at_begin = None

    def _commit_rows(self) -> CommitRows:
        staged = self._staged
        nodes = self.graph.nodes
        rows = CommitRows(messages=list(staged.messages))
        for node_id, (order, words) in staged.new.items():
            rows.nodes.append((node_id, order, _dumps(nodes[node_id]), self._words_json(words)))
        for node_id in staged.changed:
            rows.nodes.append((node_id, self._order[node_id], _dumps(nodes[node_id]), ""))
        rows.edges = [(s, t, _dumps(self.graph.edges[s, t])) for s, t in staged.edges]
        rows.events = [(e.node_id, e.timestamp.timestamp(), e.model_dump_json()) for e in staged.events]
        return rows

    def _embed(self, ids: list[str]) -> np.ndarray:
        """The index vectors of memories: own dated text and text in context, mixed (representation)."""
        return index_vectors(self.embedder.encode, [self.node(i) for i in ids], self.context_weight)

    def _vector_entry(self, node_id: str, vector: np.ndarray) -> tuple[str, np.ndarray, dict, bool]:
        attrs = self.graph.nodes[node_id]
        # the index ranks by cosine; the vector is not unit length, so its norm is kept to turn that
        # cosine back into the dot product with a unit query (VectorIndex.query)
        metadata = {"type": attrs["type"], "domain": attrs.get("domain") or "",
                    "created_at": MemoryNode.model_validate(attrs).created_at.timestamp(),
                    "norm": float(np.linalg.norm(vector))}
        return node_id, vector, metadata, node_id in self._dormant

    def commit(self) -> int | None:
        """Write the staged rows in one transaction, then their vectors; ends the open turn.
        Returns the commit's sequence number (None when nothing was staged)."""
        with self.lock:
            if not self._staged:
                self._undo = None
                self._staged_at_begin = None
                return None
            reindex = list(self._staged.reindex)
            new = [i for i in reindex if i in self._staged.new]
            self._staged_vectors(new)
            kept = self.vectors.vectors([i for i in reindex if i not in self._staged.new])
            entries = [self._vector_entry(i, self._staged.vectors[i] if i in self._staged.vectors else kept.get(i))
                       for i in reindex]
            missing = [e[0] for e in entries if e[1] is None]
            if missing:
                vectors = self._staged_vectors(missing)
                entries = [e if e[1] is not None else self._vector_entry(e[0], vectors[e[0]]) for e in entries]
            previous = self.seq
            self.vectors.connection.ensure_fresh(self.key, previous)
            self.seq = self.records.commit(self.key, self.user_id, self._commit_rows(),
                                           indexed_seq=self._indexed_through)
            self.vectors.connection.advance(self.key, self.seq)
            self._staged = StagedWrites()
            self._undo = None
            self._staged_at_begin = None
        try:
            for start in range(0, len(entries), VECTOR_BATCH):
                self.vectors.put(entries[start:start + VECTOR_BATCH])
        except Exception:
            logger.exception("the vector index of %s missed commit %d; it is repaired at the next turn",
                             self.key, self.seq)
            return self.seq
        if self._indexed_through == previous:
            self._indexed_through = self.seq
            if len(entries) > BIG_COMMIT:
                self.records.mark_indexed(self.key, self.seq)   # or the next open would re-write them all
        return self.seq

    def save(self) -> None:
        """Commit writes made outside a turn (the bulk-load path: add_node(...) then save())."""
        self.commit()

    def repair_index(self) -> int:
        """Re-write the vectors of every commit after the last one known to be indexed (after a
        crash between a commit and its vector writes); returns how many memories it re-wrote."""
        user = self.records.user(self.key)
        if user is None or user.indexed_seq >= user.seq:
            self._indexed_through = self.seq
            return 0
        with self.lock:
            ids = [i for i, _, _, _ in self.records.nodes(self.key, user.indexed_seq)
                   if i in self.graph and self.graph.nodes[i]["type"] in _RETRIEVABLE_VALUES]
            kept = self.vectors.vectors(ids)
            missing = [i for i in ids if i not in kept]
            if missing:
                logger.warning("re-indexing %d memories of %s missing from the vector index", len(missing), self.key)
                kept.update(zip(missing, self._embed(missing)))
            entries = [self._vector_entry(i, kept[i]) for i in ids]
        for start in range(0, len(entries), VECTOR_BATCH):
            self.vectors.put(entries[start:start + VECTOR_BATCH])
        self.records.mark_indexed(self.key, user.seq)
        self._indexed_through = user.seq
        return len(entries)

    def retrievable_count(self) -> int:
        """How many memories are retrieved by similarity (those the vector index holds)."""
        with self.lock:
            return sum(len(self._by_type[t]) for t in _RETRIEVABLE_VALUES)

    def check_index(self) -> int:
        """At open: if the vector index holds fewer entries than this memory has retrievable
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
        expected = self.retrievable_count()
        if not expected:
            return 0
        indexed = self.vectors.count()
        if indexed >= expected:
            return 0
        if self.reindex_limit is not None and expected - indexed > self.reindex_limit:
            connection = self.vectors.connection
            raise IncompleteIndexError(f"the vector index of user {self.user_id!r} holds {indexed} of its {expected} "
                                       f"memories (deleted, damaged or restored from an older copy?); run `pcm "
                                       f"repair --data-dir {connection.data_dir}` to rebuild it from the stored "
                                       "memories")
        logger.warning("the vector index of user %r holds %d of its %d memories (deleted, damaged or restored "
                       "from an older copy?): rebuilding the missing ones from the stored memories",
                       self.user_id, indexed, expected)
        return self.reconcile_index(remove_extra=False)[1]

    def reconcile_index(self, remove_extra: bool = True) -> tuple[int, int]:
        """Make the vector index hold exactly the retrievable memories, reading every id in it
        (a full check, for `pcm repair`, tests and `check_index`; turns rely on `repair_index`).
        Returns how many entries it removed (none unless `remove_extra`) and how many it added."""
        with self.lock:
            stored = {i for t in _RETRIEVABLE_VALUES for i in self._by_type[t]} - set(self._staged.new)
        indexed = self.vectors.ids()
        extra = sorted(indexed - stored) if remove_extra else []
        if extra:
            logger.warning("removing %d index entries with no memory", len(extra))
            self.vectors.delete(extra)
        missing = sorted(stored - indexed)
        for start in range(0, len(missing), VECTOR_BATCH):
            batch = missing[start:start + VECTOR_BATCH]
            with self.lock:
                entries = [self._vector_entry(i, v) for i, v in zip(batch, self._embed(batch))]
            self.vectors.put(entries)
        return len(extra), len(missing)

    def export(self) -> dict:
        """Everything about this memory as JSON-able data (node-link graph and audit log)."""
        with self.lock:
            return {
                "user_id": self.user_id,
                "graph": nx.node_link_data(self.graph, **NODE_LINK),
                "audit": [e.model_dump(mode="json") for e in self.read_audit()],
            }
