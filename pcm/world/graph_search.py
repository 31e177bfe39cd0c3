"""Searching one user's memory: by vector (dense), by words (lexical), by script, by cosine.

Committed memories are found through the vector index (`pcm.world.vectors`) and filtered
against the graph; memories staged since the last commit are not in the index yet, so they
are compared in memory, with vectors embedded once and kept with the staged writes
(`IndexSync.staged_vectors`). Lexical evidence comes from the two BM25 indexes of the graph
model (`pcm.world.graph_model`).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from datetime import datetime, timedelta

import numpy as np

from pcm.models import RETRIEVABLE_TYPES, RETRIEVABLE_VALUES, NodeType
from pcm.world.index_sync import IndexSync
from pcm.world.text import lexical_terms
from pcm.world.transaction import Transaction


class GraphSearch:
    """The searches of one memory: `memory` is the WeightedKnowledgeGraph that owns it."""

    def __init__(self, memory, transaction: Transaction, index_sync: IndexSync):
        self.memory = memory
        self.transaction = transaction
        self.index_sync = index_sync

    def dense_search(
        self,
        query_vector: np.ndarray,
        n: int,
        types: Iterable[NodeType] = RETRIEVABLE_TYPES,
        include_dormant: bool = False,
    ) -> list[tuple[str, float]]:
        """(node id, cosine similarity) of the nearest memories, best first.

        Committed memories come from the vector index (the live collection, and the dormant one
        with `include_dormant`), queried without a metadata filter and filtered here against the
        graph, which also hides what another process indexed but this copy has not loaded yet;
        memories written since the last commit are compared in memory.
        """
        wanted = {NodeType(t).value for t in types} & RETRIEVABLE_VALUES
        if n <= 0 or not wanted:
            return []
        memory, transaction = self.memory, self.transaction
        with memory.lock:
            nodes = memory.graph.nodes

            def accept(node_id: str) -> bool:
                attrs = nodes.get(node_id)
                return (
                    attrs is not None
                    and attrs["type"] in wanted
                    and (include_dormant or attrs["weight"] >= memory.dormant_floor)
                )

            pending = [i for i in transaction.staged.reindex if i in nodes and accept(i)]
            unwanted = sum(len(memory.model.by_type[t]) for t in RETRIEVABLE_VALUES - wanted)
            fetch = n + unwanted + len(transaction.staged.reindex)
        where = None
        if unwanted > max(n, 200):
            where = {"type": {"$in": sorted(wanted)}}
            fetch = n + len(transaction.staged.reindex)
        found = [
            (i, s)
            for i, s in memory.vectors.query(query_vector, fetch, include_dormant, where)
            if i not in transaction.staged.reindex and accept(i)
        ]
        if pending:
            with memory.lock:
                vectors = self.index_sync.staged_vectors(pending)
            found += [(i, float(np.dot(query_vector, v))) for i, v in vectors.items()]
            found.sort(key=lambda item: -item[1])
        return found[:n]

    def lexical_search(self, query: str, n: int, include_dormant: bool = False) -> dict[str, float]:
        """Lexical evidence in (0, 1] for the best `n` matches: BM25 over each memory's own dated text
        and over its text in context, each divided by the query's best score, mixed with
        `context_weight` (`pcm.formulas.mix`)."""
        terms = lexical_terms(query)
        if not terms:
            return {}
        memory = self.memory
        model, share_in_context = memory.model, memory.context_weight
        with memory.lock:
            evidence = None
            for index, share in ((model.lexical, 1.0 - share_in_context), (model.context_lexical, share_in_context)):
                scores = index.scores(terms) if share > 0 else None
                best = float(scores.max()) if scores is not None and len(scores) else 0.0
                if best > 0:
                    part = share * scores.astype(np.float64) / best
                    evidence = part if evidence is None else evidence + part
            if evidence is None:
                return {}
            nodes, ids = model.graph.nodes, model.lexical.ids
            matched = np.flatnonzero(evidence > 0)
            out: dict[str, float] = {}
            for number in matched[np.argsort(-evidence[matched], kind="stable")]:
                if len(out) >= n:
                    break
                if include_dormant or nodes[ids[number]]["weight"] >= model.dormant_floor:
                    out[ids[number]] = float(evidence[number])
        return out

    def latest_in_script(self, cjk: bool, n: int, include_dormant: bool = False) -> list[str]:
        """The ids of the latest `n` retrievable memories written in Chinese/Japanese/Korean
        characters (`cjk`) or not, newest first."""
        model = self.memory.model
        with self.memory.lock:
            found = []
            for node_id in reversed(model.by_script[cjk]):
                if len(found) >= n:
                    break
                if include_dormant or node_id not in model.dormant:
                    found.append(node_id)
            return found

    def timed_search(
        self, intervals: Iterable[tuple[datetime, datetime]], reach_days: float, n: int, include_dormant: bool = False
    ) -> list[str]:
        """The ids of at most `n` memories whose times (the time index) lie within the intervals or
        at most `reach_days` outside them: the nearest first, the newest among equals."""
        model = self.memory.model
        reach = timedelta(days=reach_days)
        inside: dict[str, None] = {}
        outside: dict[str, float] = {}
        with self.memory.lock:
            dormant = () if include_dormant else model.dormant
            for start, end in intervals:
                inside.update((i, None) for _, i in model.timed_between(start, end) if i not in dormant)
                low, high = start.timestamp(), end.timestamp()
                near = [*model.timed_between(start - reach, start), *model.timed_between(end, end + reach)]
                for seconds, node_id in near:
                    if node_id not in dormant:
                        gap = max(low - seconds, seconds - high)  # seconds outside the interval
                        outside[node_id] = min(outside.get(node_id, gap), gap)
            order = model.order
            # a month asked of every year can hold most of a large memory: pick the newest n of
            # those inside without sorting them all
            chosen = heapq.nlargest(n, inside, key=order.__getitem__)
            if len(chosen) < n:
                rest = (i for i in outside if i not in inside)
                chosen += sorted(rest, key=lambda i: (outside[i], -order[i]))[: n - len(chosen)]
            return chosen

    def cosine(self, query_vector: np.ndarray, node_ids: list[str]) -> dict[str, float]:
        """Cosine similarity of the query to given memories (vectors read from the index)."""
        if not node_ids:
            return {}
        memory = self.memory
        with memory.lock:
            pending = [i for i in node_ids if i in self.transaction.staged.reindex and i in memory.graph]
            staged = self.index_sync.staged_vectors(pending) if pending else {}
        found = memory.vectors.vectors([i for i in node_ids if i not in staged])
        found.update(staged)
        return {i: float(np.dot(query_vector, v)) for i, v in found.items()}
