"""What did we believe on date X: a user's memory as it stood at a moment, from the audit log.

Every weight change is an audit event stamped with the time of the turn that made it (the
message time when the caller gives one). Replaying the committed events up to a moment gives
each memory's weight and type then; memories created later, and edges (the `supersedes` links
among them) made later, are left out. Content and provenance never change, so they are read
from the current graph. The view answers the same reads as the memory itself, so retrieval
runs on it unchanged; its lexical scores use today's word statistics. Building it reads the
audit log up to the moment: a query about the past costs time proportional to that history.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

import numpy as np

from pcm.models import RETRIEVABLE_TYPES, RETRIEVABLE_VALUES, MemoryChange, MemoryEdge, MemoryNode, NodeType, as_utc
from pcm.world.text import lexical_terms


class MemoryAsOf:
    """A read-only view of a WeightedKnowledgeGraph at `moment`."""

    def __init__(self, memory, moment: datetime | str):
        self.memory = memory
        self.moment = as_utc(moment, field="as_of")
        self.user_id = memory.user_id
        self.dormant_floor = memory.dormant_floor
        self._cutoff = self.moment.timestamp()
        weights: dict[str, float] = {}
        types: dict[str, str] = {}
        changed: dict[str, str] = {}
        for text in memory.records.audit(memory.key, until=self._cutoff):
            event = MemoryChange.model_validate_json(text)
            weights[event.node_id] = event.new_weight
            changed[event.node_id] = event.timestamp.isoformat()
            if event.type is not None:
                types[event.node_id] = NodeType(event.type).value
        self._weights = {i: w for i, w in weights.items() if i in memory}
        self._types = types
        self._changed = changed

    # ------------------------------------------------------------------ nodes
    def __len__(self) -> int:
        return len(self._weights)

    def __contains__(self, node_id: str) -> bool:
        return node_id in self._weights

    def attrs(self, node_id: str) -> Mapping:
        if node_id not in self._weights:
            raise KeyError(f"no memory with id {node_id!r} on {self.moment.isoformat()}")
        attrs = dict(self.memory.attrs(node_id))
        attrs["weight"] = self._weights[node_id]
        attrs["type"] = self._types.get(node_id, attrs["type"])
        attrs["updated_at"] = attrs["last_accessed"] = self._changed[node_id]
        if attrs.get("decayed_at") and as_utc(attrs["decayed_at"]).timestamp() > self._cutoff:
            attrs["decayed_at"] = None
        return attrs

    def retrievable_count(self) -> int:
        return sum(1 for i in self._weights if self._types.get(i, self.memory.attrs(i)["type"]) in RETRIEVABLE_VALUES)

    def weight(self, node_id: str) -> float:
        return self.attrs(node_id)["weight"]

    def node(self, node_id: str) -> MemoryNode:
        return MemoryNode.model_validate(self.attrs(node_id))

    def nodes(self, types: Iterable[NodeType] | None = None, include_dormant: bool = True) -> list[MemoryNode]:
        wanted = {NodeType(t).value for t in types} if types else None
        out = []
        for node_id in self.memory.graph.nodes:
            if node_id not in self._weights:
                continue
            attrs = self.attrs(node_id)
            if (wanted is None or attrs["type"] in wanted) and (
                include_dormant or attrs["weight"] >= self.dormant_floor
            ):
                out.append(MemoryNode.model_validate(attrs))
        return out

    def contents(self, node_type: NodeType) -> list[tuple[str, str]]:
        return [(i, content) for i, content in self.memory.contents(node_type) if i in self._weights]

    def is_dormant(self, node: MemoryNode) -> bool:
        return node.weight < self.dormant_floor

    def history(self, node_id: str) -> list[MemoryChange]:
        return [e for e in self.memory.history(node_id) if e.timestamp.timestamp() <= self._cutoff]

    # ------------------------------------------------------------------ edges
    def _edge_existed(self, source: str, target: str, attrs: Mapping) -> bool:
        return (
            source in self._weights
            and target in self._weights
            and as_utc(attrs["timestamp"]).timestamp() <= self._cutoff
        )

    def edges(self) -> list[MemoryEdge]:
        return [
            MemoryEdge.model_validate(a)
            for s, t, a in self.memory.graph.edges(data=True)
            if self._edge_existed(s, t, a)
        ]

    def insertion_order(self, node_id: str) -> int:
        return self.memory.insertion_order(node_id)

    def in_edges(self, node_id: str, relation: str | None = None) -> list[tuple[str, Mapping]]:
        return [(s, a) for s, a in self.memory.in_edges(node_id, relation) if self._edge_existed(s, node_id, a)]

    def out_edges(self, node_id: str, relation: str | None = None) -> list[tuple[str, Mapping]]:
        return [(t, a) for t, a in self.memory.out_edges(node_id, relation) if self._edge_existed(node_id, t, a)]

    def neighbours(self, node_id: str) -> list[tuple[str, MemoryEdge]]:
        return [
            (other, edge)
            for other, edge in self.memory.neighbours(node_id)
            if self._edge_existed(edge.source, edge.target, edge.model_dump(mode="json"))
        ]

    # ------------------------------------------------------------------ search
    def _accept(self, node_id: str, wanted: set[str], include_dormant: bool) -> bool:
        if node_id not in self._weights:
            return False
        attrs = self.attrs(node_id)
        return attrs["type"] in wanted and (include_dormant or attrs["weight"] >= self.dormant_floor)

    def dense_search(
        self, query_vector: np.ndarray, n: int, types: Iterable[NodeType] | None = None, include_dormant: bool = False
    ) -> list[tuple[str, float]]:
        wanted = {NodeType(t).value for t in (types or RETRIEVABLE_TYPES)}
        excluded = sum(1 for i in self._weights if not self._accept(i, wanted, include_dormant))
        found = self.memory.vectors.query(
            query_vector, n + excluded, include_dormant=True, where={"created_at": {"$lte": self._cutoff}}
        )
        return [(i, s) for i, s in found if self._accept(i, wanted, include_dormant)][:n]

    def lexical_search(self, query: str, n: int, include_dormant: bool = False) -> dict[str, float]:
        terms = lexical_terms(query)
        if not terms:
            return {}
        wanted = {t.value for t in RETRIEVABLE_TYPES}
        out = self.memory.lexical.search(terms, n, lambda i: self._accept(i, wanted, include_dormant))
        best = max(out.values(), default=0.0)
        return {i: s / best for i, s in out.items()} if best > 0 else {}

    def latest_in_script(self, cjk: bool, n: int, include_dormant: bool = False) -> list[str]:
        wanted = {t.value for t in RETRIEVABLE_TYPES}
        every = self.memory.latest_in_script(cjk, len(self.memory), include_dormant=True)
        return [i for i in every if self._accept(i, wanted, include_dormant)][:n]

    def timed_search(self, intervals, reach_days: float, n: int, include_dormant: bool = False) -> list[str]:
        wanted = {t.value for t in RETRIEVABLE_TYPES}
        every = self.memory.timed_search(intervals, reach_days, len(self.memory), include_dormant=True)
        return [i for i in every if self._accept(i, wanted, include_dormant)][:n]

    def speakers(self) -> list[str]:
        return self.memory.speakers()

    def years(self) -> range:
        return self.memory.years()

    def cosine(self, query_vector: np.ndarray, node_ids: list[str]) -> dict[str, float]:
        return self.memory.cosine(query_vector, [i for i in node_ids if i in self._weights])

    def informative_words(self, words: Iterable[str], max_share: float = 0.05) -> set[str]:
        return self.memory.informative_words(words, max_share)

    def domain_agreement(self) -> float:
        """The memory's ι as measured now: domain distributions never change, and the latest facts
        say best how this deployment's domains behave (the mask of a past view fades alike)."""
        return self.memory.domain_agreement()
