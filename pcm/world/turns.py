"""A turn's transaction: the one object a turn's writes go through, from its first node to its commit.

`MemoryStore.begin_turn` takes the user's locks, starts the memory's undo log and returns a
`TurnTransaction`; the store keeps it as the user's open turn. It ends in one of two ways:
`commit` (the staged rows in one transaction, then the vectors) or `abort` (nothing of it stays
in memory or on disk). A graph run names its turn by `owner` in its state, so a run whose turn
was rolled back after `turn_timeout` can neither commit nor abort another run's turn.

`MemoryStore.exclusive` holds a turn around a whole graph run (`PCM.process`: the checkpoint is
read and written by one writer at a time too); a run inside it joins that turn, found through
the context (`held_turn`), and the turn ends when the block ends.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from types import MappingProxyType

from pcm.world.knowledge_graph import WeightedKnowledgeGraph

logger = logging.getLogger(__name__)
#: the turns the current context holds (`MemoryStore.exclusive`), by user
_HELD: contextvars.ContextVar[MappingProxyType] = contextvars.ContextVar("pcm_held_turns", default=MappingProxyType({}))


def held_turn(user_id: str) -> "TurnTransaction | None":
    """The turn of `user_id` that the current context holds, if it is still open."""
    turn = _HELD.get().get(user_id)
    return turn if turn is not None and turn.is_open else None


def hold(turn: "TurnTransaction") -> contextvars.Token:
    """Make `turn` the current context's turn of its user (undo with `_HELD.reset(token)`)."""
    return _HELD.set(MappingProxyType({**_HELD.get(), turn.user_id: turn}))


@dataclass(eq=False)
class TurnTransaction:
    """An open turn of one user: its owner, its memory and the locks it holds (see the module)."""

    store: object  # the MemoryStore that began it and keeps it open (`open_turn`, `holding_commits`)
    user_id: str
    owner: str
    memory: WeightedKnowledgeGraph
    locks: tuple
    external: bool
    started: float = field(default_factory=time.monotonic)
    timer: threading.Timer | None = None

    @property
    def is_open(self) -> bool:
        return self.store.open_turn(self.user_id) is self

    def commit(self, message_ids: list[str] | tuple = ()) -> int | None:
        """Write the turn (one transaction, then the vectors) with the ids of the messages it
        stored; ends it unless a block holds it (`external`), which then goes on in a new turn."""
        for message_id in message_ids:
            if self.memory.has_message(message_id):
                self.abort()
                raise ValueError(f"message {message_id!r} is already stored for user {self.user_id!r}; nothing changed")
            self.memory.stage_message(message_id)
        with ExitStack() as holding:
            try:
                self.memory.embed_staged()
                holding.enter_context(self.store.holding_commits(self.user_id))
                seq = self.memory.commit()
            except BaseException:
                self.abort()
                raise
            if self.external:
                self.memory.begin()  # still holding the commit lock: a begin can repair the index (a write)
        if not self.external:
            self.end()
        return seq

    def abort(self) -> None:
        """Roll the turn back: nothing of it stays in memory or on disk. A no-op once it has ended."""
        if not self.is_open:
            return
        self.memory.rollback()
        if self.external:
            self.memory.begin()
        else:
            self.end()

    def expire(self) -> None:
        """Roll back a turn still open after `turn_timeout` (its run was cancelled between two
        nodes); its memory refuses writes until the next turn begins."""
        if self.is_open:
            logger.error(
                "rolling back a turn of %r still open after %g s (turn_timeout)", self.user_id, self.store.turn_timeout
            )
            self.memory.fence()
            self.abort()

    def end(self) -> None:
        """Forget the turn and release its locks (what was not committed is rolled back)."""
        self.store.forget_turn(self)
        if self.timer is not None:
            self.timer.cancel()
        self.memory.rollback()
        process_lock, user_lock = self.locks
        try:
            if user_lock is not None:
                user_lock.release()
        finally:
            process_lock.release()
