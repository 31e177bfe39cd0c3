"""The NetworkX model of one user's memories and the lookups kept in step with it.

`GraphModel` holds the DiGraph (node and edge attributes are the stored JSON values) and what
reads would otherwise scan the graph for: the memories by type and by script, the dormant ones,
their insertion order, how many retrievable memories each speaker has, and the two BM25 indexes
(`pcm.world.lexical`) over each memory's own dated text and its text in context, and the time
index: each retrievable memory's times (`pcm.world.dates.memory_times`) in order. Nodes change
only through `insert`, `set_attrs` and `undo`, which keep all of these in step.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Mapping
from datetime import datetime, timezone

import networkx as nx

from pcm.models import RETRIEVABLE_VALUES, NodeType
from pcm.world.dates import memory_times
from pcm.world.lexical import LexicalIndex
from pcm.world.memory_words import split_words
from pcm.world.text import has_cjk


class GraphModel:
    """The graph of one user's memories and its lookups (no storage, no locking: the
    WeightedKnowledgeGraph that owns it does both)."""

    def __init__(self, dormant_floor: float):
        self.dormant_floor = dormant_floor
        self.graph = nx.DiGraph()
        self.lexical = LexicalIndex()  # own dated text; also the document frequencies
        self.context_lexical = LexicalIndex()  # text in context, same documents in the same order
        self.speakers: Counter[str] = Counter()
        self.by_type: dict[str, dict[str, None]] = {t.value: {} for t in NodeType}
        #: retrievable memories by script (True: Chinese/Japanese/Korean characters), oldest first
        self.by_script: dict[bool, dict[str, None]] = {True: {}, False: {}}
        self.dormant: set[str] = set()
        self.order: dict[str, int] = {}
        self.next_order = 0
        #: the time index: (POSIX seconds, id) of each retrievable memory's times, sorted
        self.times: list[tuple[float, str]] = []

    def insert(self, rows: list[tuple[str, int, dict, list[str]]]) -> None:
        """Put stored nodes (id, insertion order, attributes, stored words) into the graph and the
        lookups, in order (loading, refreshing, adding)."""
        if not rows:
            return
        self.graph.add_nodes_from((node_id, attrs) for node_id, _, attrs, _ in rows)
        self.order.update((node_id, order) for node_id, order, _, _ in rows)
        self.next_order = max(self.next_order, max(order for _, order, _, _ in rows) + 1)
        by_type, floor = self.by_type, self.dormant_floor
        timed: list[tuple[float, str]] = []
        for node_id, _, attrs, _ in rows:
            kind = attrs["type"]
            by_type[kind][node_id] = None
            if kind in RETRIEVABLE_VALUES:
                self.by_script[has_cjk(attrs["content"])][node_id] = None
                if attrs["weight"] < floor:
                    self.dormant.add(node_id)
                speaker = (attrs.get("source") or {}).get("speaker")
                if speaker:
                    self.speakers[speaker] += 1
                timed.extend((moment.timestamp(), node_id) for moment in memory_times(attrs))
        self._index_times(timed)
        split = [(node_id, split_words(words)) for node_id, _, _, words in rows if words]
        self.lexical.extend([(node_id, own) for node_id, (own, _) in split])
        self.context_lexical.extend([(node_id, context) for node_id, (_, context) in split])

    def set_attrs(self, node_id: str, attrs: dict) -> None:
        """Replace a node's attributes, keeping the type and dormancy lookups right."""
        current = self.graph.nodes[node_id]
        if current["type"] != attrs["type"]:
            self.by_type[current["type"]].pop(node_id, None)
            self.by_type[attrs["type"]][node_id] = None
        current.clear()
        current.update(attrs)
        if attrs["type"] in RETRIEVABLE_VALUES and attrs["weight"] < self.dormant_floor:
            self.dormant.add(node_id)
        else:
            self.dormant.discard(node_id)

    def undo(self, entry: tuple, new: Mapping[str, tuple[int, list[str]]]) -> None:
        """Reverse one write of a turn's undo log (`pcm.world.transaction`): ("node", id) the
        node added last (its stored words in `new`, the staged new nodes), ("attrs", id,
        previous attributes), ("edge", source, target, previous attributes or None); ("message",
        id) changed nothing here."""
        if entry[0] == "node":
            node_id = entry[1]
            attrs = self.graph.nodes[node_id]
            own, context = split_words(new[node_id][1])
            self.lexical.remove_last(node_id, own)
            self.context_lexical.remove_last(node_id, context)
            speaker = (attrs.get("source") or {}).get("speaker")
            if speaker and attrs["type"] in RETRIEVABLE_VALUES:
                self.speakers[speaker] -= 1
            self.by_type[attrs["type"]].pop(node_id, None)
            self.by_script[has_cjk(attrs["content"])].pop(node_id, None)
            if attrs["type"] in RETRIEVABLE_VALUES:
                for moment in memory_times(attrs):
                    place = bisect.bisect_left(self.times, (moment.timestamp(), node_id))
                    if place < len(self.times) and self.times[place][1] == node_id:
                        del self.times[place]
            self.dormant.discard(node_id)
            self.order.pop(node_id, None)
            self.graph.remove_node(node_id)
            self.next_order -= 1
        elif entry[0] == "attrs":
            self.set_attrs(entry[1], entry[2])
        elif entry[0] == "edge":
            _, source, target, previous = entry
            if previous is None:
                self.graph.remove_edge(source, target)
            else:
                self.graph.edges[source, target].clear()
                self.graph.edges[source, target].update(previous)

    def _index_times(self, timed: list[tuple[float, str]]) -> None:
        """Add entries to the sorted time index: one by one for a turn's few, appended and sorted
        once for a load (inserting 100k entries one by one is quadratic)."""
        if len(timed) <= 64:
            for entry in timed:
                bisect.insort(self.times, entry)
            return
        self.times.extend(timed)
        self.times.sort()

    def timed_between(self, start: datetime, end: datetime) -> list[tuple[float, str]]:
        """(POSIX seconds, id) of the time index's entries in [start, end), oldest first."""
        low = bisect.bisect_left(self.times, (start.timestamp(), ""))
        high = bisect.bisect_left(self.times, (end.timestamp(), ""))
        return self.times[low:high]

    def years(self) -> range:
        """The years the time index spans (empty without timed memories)."""
        if not self.times:
            return range(0)
        first, last = (datetime.fromtimestamp(self.times[i][0], timezone.utc).year for i in (0, -1))
        return range(first, last + 1)

    def retrievable_ids(self) -> set[str]:
        """The memories retrieved by similarity (those the vector index holds once committed)."""
        return {i for t in RETRIEVABLE_VALUES for i in self.by_type[t]}

    def retrievable_count(self) -> int:
        return sum(len(self.by_type[t]) for t in RETRIEVABLE_VALUES)
