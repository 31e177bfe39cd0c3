"""Writing to one user's memory: new memories, links, weight and type changes, ingested messages.

Every write changes the graph model (`pcm.world.graph_model`), is staged for the next commit
and logged for undo (`pcm.world.transaction`); each memory written is audited by a
`MemoryChange`, which the caller gets back. A memory whose type or dormancy changes is staged
for re-indexing (its vector moves between the live and dormant collections).
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from pcm.models import RETRIEVABLE_VALUES, MemoryChange, MemoryEdge, MemoryNode, NodeType, utcnow
from pcm.world.dates import said_at
from pcm.world.memory_words import words_of
from pcm.world.transaction import Transaction


class GraphWrites:
    """The writes of one memory: `memory` is the WeightedKnowledgeGraph that owns it,
    `transaction` its staged writes and undo log."""

    def __init__(self, memory, transaction: Transaction):
        self.memory = memory
        self.transaction = transaction

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
        if given, is used instead of embedding the content (bulk loads and migrations). A fact or
        hypothesis is linked to the day it was said on (`link_day`)."""
        memory, transaction = self.memory, self.transaction
        with memory.lock:
            if node.id in memory.graph:
                raise ValueError(f"memory {node.id!r} already exists")
            attrs = node.model_dump(mode="json")
            words = words_of(attrs, node)
            transaction.log(("node", node.id))
            order = memory.model.next_order
            memory.model.insert([(node.id, order, attrs, words)])
            staged = transaction.staged
            staged.new[node.id] = (order, words)
            if attrs["type"] in RETRIEVABLE_VALUES:
                staged.reindex[node.id] = None
                if embedding is not None:
                    staged.vectors[node.id] = np.asarray(embedding, dtype=np.float32)
                self.link_day(node.id, agent=agent, turn=turn, thread_id=thread_id)
            return transaction.record(
                MemoryChange(
                    turn=turn,
                    thread_id=thread_id,
                    node_id=node.id,
                    content=node.content,
                    old_weight=None,
                    new_weight=node.weight,
                    reason=reason,
                    agent=agent,
                    timestamp=node.created_at,
                    type=node.type,
                )
            )

    def link_day(self, node_id: str, *, agent: str, turn: int | None = None, thread_id: str | None = None) -> None:
        """Link a memory to the day node of the UTC date it was said on (`said_at`), made on first
        need: time as part of the graph, which story expansion follows (`pcm.world.story`)."""
        attrs = self.memory.graph.nodes[node_id]
        said = said_at(attrs)
        if said is None:
            return
        day_id = day_node_id(said.date().isoformat())
        written = attrs["created_at"]
        if day_id not in self.memory.graph:
            day = MemoryNode(
                id=day_id,
                content=said.date().isoformat(),
                type=NodeType.DAY,
                weight=1.0,
                created_at=written,
                updated_at=written,
                last_accessed=written,
            )
            self.add_node(day, reason="day first named", agent=agent, turn=turn, thread_id=thread_id)
        self.add_edge(MemoryEdge(source=node_id, target=day_id, relation="said_on", weight=1.0, timestamp=written))

    def link_days(self, agent: str) -> int:
        """Link every fact and hypothesis that has no day yet (a store written before day nodes);
        returns how many it linked."""
        memory = self.memory
        with memory.lock:
            unlinked = [
                node_id
                for kind in RETRIEVABLE_VALUES
                for node_id in memory.model.by_type[kind]
                if not memory.out_edges(node_id, "said_on")
            ]
            for node_id in sorted(unlinked, key=memory.insertion_order):
                self.link_day(node_id, agent=agent)
        return len(unlinked)

    def add_edge(self, edge: MemoryEdge) -> None:
        """Link two stored memories (replacing the link between them, if any)."""
        graph = self.memory.graph
        with self.memory.lock:
            for end in (edge.source, edge.target):
                if end not in graph:
                    raise KeyError(f"cannot link unknown memory {end!r}")
            previous = graph.edges[edge.source, edge.target] if graph.has_edge(edge.source, edge.target) else None
            self.transaction.log(("edge", edge.source, edge.target, dict(previous) if previous is not None else None))
            graph.add_edge(edge.source, edge.target, **edge.model_dump(mode="json"))
            self.transaction.staged.edges[(edge.source, edge.target)] = None

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
        memory, transaction = self.memory, self.transaction
        with memory.lock:
            node = memory.node(node_id)
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
            previous = dict(memory.graph.nodes[node_id])
            was_dormant = node_id in memory.model.dormant
            transaction.log(("attrs", node_id, previous))
            memory.model.set_attrs(node_id, {**previous, **updated.model_dump(mode="json")})
            staged = transaction.staged
            if node_id not in staged.new:
                staged.changed[node_id] = None
            retrievable = memory.graph.nodes[node_id]["type"] in RETRIEVABLE_VALUES
            if retrievable and (type is not None or was_dormant != (node_id in memory.model.dormant)):
                staged.reindex[node_id] = None
            return transaction.record(
                MemoryChange(
                    turn=turn,
                    thread_id=thread_id,
                    node_id=node_id,
                    content=node.content,
                    old_weight=old,
                    new_weight=updated.weight,
                    reason=reason,
                    agent=agent,
                    timestamp=now,
                    type=type,
                )
            )

    def stage_message(self, message_id: str) -> None:
        """Record that the message with this id is stored by this turn (idempotent ingestion)."""
        with self.memory.lock:
            self.transaction.log(("message", message_id))
            self.transaction.staged.messages.append(message_id)


def day_node_id(day: str) -> str:
    """The id of the day node of an ISO date ("2023-05-08" → "day-2023-05-08")."""
    return f"day-{day}"
