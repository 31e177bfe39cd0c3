"""A memory's staged writes and the undo log of its open turn.

Every write to a memory is staged (`StagedWrites`): the next commit writes exactly those rows.
A turn is a transaction: `begin` (the store calls it with the user's lock held) starts an undo
log, every write logs how to undo itself, and `rollback` replays the log newest first
(`GraphModel.undo`) and puts the staged writes back as they were when the turn began, so a
failed turn leaves nothing in memory and nothing on disk. Writes outside a turn (bulk loading,
migrations, tests) are staged the same way, with no log. A turn rolled back after
`turn_timeout` is fenced: its run may still be going, and must not write outside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pcm.models import MemoryChange
from pcm.world.graph_model import GraphModel


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
        return StagedWrites(
            dict(self.new),
            dict(self.changed),
            dict(self.edges),
            list(self.events),
            list(self.messages),
            dict(self.reindex),
            dict(self.vectors),
        )


class Transaction:
    """The staged writes of one user's memory, and the undo log of its open turn (None
    outside a turn). The memory's lock guards it."""

    def __init__(self, user_id: str):
        self.user_id = user_id
        self.staged = StagedWrites()
        self.undo_log: list[tuple] | None = None
        self._staged_at_begin: StagedWrites | None = None
        self._fenced = False

    @property
    def in_turn(self) -> bool:
        return self.undo_log is not None

    def begin(self) -> None:
        """Start a turn's undo log, remembering what was staged before it."""
        self._fenced = False
        self.undo_log = []
        self._staged_at_begin = self.staged.copy()

    def fence(self) -> None:
        """Refuse writes until the next turn begins."""
        self._fenced = True

    def log(self, entry: tuple) -> None:
        """Log how to undo a write (`GraphModel.undo`); refused once the turn is fenced."""
        if self._fenced:
            raise RuntimeError(f"the turn writing to {self.user_id!r} was rolled back after turn_timeout")
        if self.undo_log is not None:
            self.undo_log.append(entry)

    def record(self, change: MemoryChange) -> MemoryChange:
        """Stage an audit event."""
        self.staged.events.append(change)
        return change

    def end(self) -> None:
        """End the open turn, keeping what is staged."""
        self.undo_log = None
        self._staged_at_begin = None

    def committed(self) -> None:
        """The staged writes are stored: nothing is staged any more, and the turn ends."""
        self.staged = StagedWrites()
        self.end()

    def rollback(self, model: GraphModel) -> None:
        """Undo every write of the open turn in `model`, newest first, and stage again what was
        staged when it began; no-op outside a turn."""
        if self.undo_log is None:
            return
        for entry in reversed(self.undo_log):
            model.undo(entry, self.staged.new)
        self.staged = self._staged_at_begin or StagedWrites()
        self.end()
