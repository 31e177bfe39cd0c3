"""All users' long-term memories, one namespace per user, and the turns that change them.

Each user's memory is keyed by a hash of the user id (rows in the graph store, Chroma
collections), so ids can hold any characters and one user's memories never reach another's.

Open memories are kept in a bounded LRU cache (`open_users`): a process serving many users
holds only the most recently used ones; an evicted user is loaded again from the store.

Single writer per user: a turn holds the user's lock from its first node to its commit, in
this process (a lock per user) and across processes (a file lock beside the SQLite database,
or a PostgreSQL advisory lock). A second writer waits for it, up to `lock_timeout` seconds,
then gets `MemoryBusyError` and nothing changes. A turn that is never ended (its run was
cancelled between two nodes) is rolled back after `turn_timeout` seconds.

Readers are never starved by a writer. A read (`reading`, what `PCM.search` uses) in another
process does not take the turn lock: with embedded Chroma, which is not process-safe, it takes
the user's commit lock, which a turn holds only while it stores its rows and vectors (50-150 ms;
the new memories are embedded before it is taken), so a search waits for at most one commit and
sees every turn committed before it (the rows in SQLite WAL, the vectors written). Opening a
memory a process does not hold yet can write (migration, index repair), so that takes both locks.
Waiters get in turn by turn: file locks are waited for by polling, and a writer that releases
at the end of a turn takes the lock back at once, so a polling reader almost never got it (one
search waited 60 s and failed, another 10 s, while a writer process ingested 40 turns). Each
file lock, and each user's lock in this process, has a turnstile (a second file lock, or
threading lock) that a waiter holds while it waits and every taker passes first, so a waiter
gets in after at most one hold. (PostgreSQL advisory locks are still polled.)
`make bench-concurrency` (2 cores shared with other work, a writer process ingesting 60 turns):
searches p50/p99/max 0.14/0.34/2.6 s, the max once, while the writer first opened the memory;
none failed or stale, at most 1 turn committed during one. Before: one search, waiting 43 s for
all 60 turns (in a run of 40 turns, one failed after lock_timeout, 60 s).
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path

from pcm.validation import validate_user_id
from pcm.world.chroma import ChromaConnection
from pcm.world.embeddings import Embedder
from pcm.world.knowledge_graph import AUTO_REINDEX_LIMIT, WeightedKnowledgeGraph, user_key
from pcm.world.records import GraphRecords
from pcm.world.turns import _HELD, TurnTransaction, held_turn, hold
from pcm.world.user_locks import MemoryBusyError
from pcm.world.vectors import VectorIndex

logger = logging.getLogger(__name__)


class MemoryStore:
    """Opens each user's WeightedKnowledgeGraph (LRU-cached) and runs their turns."""

    def __init__(
        self,
        data_dir: str | Path,
        embedder: Embedder,
        dormant_floor: float = 0.05,
        *,
        graph_store: str = "sqlite",
        postgres_url: str = "",
        vector_store: str = "chroma",
        chroma_url: str = "",
        open_users: int = 64,
        lock_timeout: float = 60.0,
        turn_timeout: float = 600.0,
        context_weight: float = 0.5,
    ):
        self.data_dir = Path(data_dir)
        self.context_weight = context_weight
        #: how many vectors missing from a user's index opening rebuilds (None: all; `pcm repair`)
        self.reindex_limit: int | None = AUTO_REINDEX_LIMIT
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.embedder = embedder
        self.dormant_floor = dormant_floor
        self.open_users = max(1, open_users)
        self.lock_timeout = lock_timeout
        self.turn_timeout = turn_timeout
        self.records = GraphRecords(graph_store, self.data_dir, postgres_url)
        # one index per open memory: a search reads the live collection, the dormant one only on
        # request; each cached index costs about 2.3 MB (1,000 users served round-robin with 64
        # open: peak RSS 1.73 GB with 16 cached indexes, 2.28 GB with 256)
        self.chroma = ChromaConnection.shared(
            vector_store, str(self.data_dir), chroma_url, cached_indexes=self.open_users
        )
        self._memories: OrderedDict[str, WeightedKnowledgeGraph] = OrderedDict()
        self._turns: dict[str, TurnTransaction] = {}
        self._process_locks: dict[str, threading.Lock] = {}
        self._turnstiles: dict[str, threading.Lock] = {}
        self._user_locks: dict[str, dict[str, object]] = {}
        self._guard = threading.RLock()

    # ------------------------------------------------------------------ users
    def user_folder(self, user_id: str) -> Path:
        """Where a user's files of the former layout (graph.json, audit.jsonl) are looked for."""
        return self.data_dir / "users" / user_key(user_id)

    def exists(self, user_id: str) -> bool:
        validate_user_id(user_id)
        return (
            user_id in self._memories
            or self.records.user(user_key(user_id)) is not None
            or (self.user_folder(user_id) / "graph.json").exists()
        )

    def users(self) -> list[str]:
        """User ids with stored memory (including data directories not migrated yet)."""
        found = set(self.records.users())
        for meta in (self.data_dir / "users").glob("*/user.json"):
            if (meta.parent / "graph.json").exists():
                found.add(json.loads(meta.read_text(encoding="utf-8"))["user_id"])
        return sorted(found)

    def cached_users(self) -> list[str]:
        """The users whose memory this process holds open now, least recently used first."""
        return list(self._memories)

    def open(self, user_id: str, create: bool = True, refresh: bool = False) -> WeightedKnowledgeGraph:
        """The memory of `user_id`; with create=False an unknown user is an error, not a new store.
        With `refresh`, a cached memory loads what other processes committed (unless a turn of
        this process holds it, which then has the latest)."""
        validate_user_id(user_id)
        with self._guard:
            memory = self._memories.get(user_id)
            if memory is not None:
                self._memories.move_to_end(user_id)
                if refresh and user_id not in self._turns:
                    lock = self._process_lock(user_id)
                    if lock.acquire(blocking=False):
                        try:
                            memory.refresh()
                        finally:
                            lock.release()
                return memory
            if not create and not self.exists(user_id):
                raise LookupError(f"no memory for user {user_id!r} in {self.data_dir}")
            from pcm.world.migration import migrate_legacy_user

            key = user_key(user_id)
            migrate_legacy_user(self.records, self.chroma, self.user_folder(user_id), user_id, key)
            memory = WeightedKnowledgeGraph(
                user_id,
                key,
                self.records,
                VectorIndex(self.chroma, key),
                self.embedder,
                self.dormant_floor,
                self.context_weight,
                self.reindex_limit,
            )
            memory.link_days()  # a store written before day nodes
            self._memories[user_id] = memory
            self._evict()
            return memory

    def _evict(self) -> None:
        """Close the least recently used memories beyond `open_users`, except busy ones (in a turn,
        locked, or holding writes not yet saved)."""
        excess = len(self._memories) - self.open_users
        for user_id in list(self._memories):
            if excess <= 0:
                break
            memory = self._memories[user_id]
            lock = self._process_locks.get(user_id)
            if user_id in self._turns or memory.has_uncommitted or (lock is not None and lock.locked()):
                continue
            del self._memories[user_id]
            self._user_locks.pop(user_id, None)
            excess -= 1

    # ------------------------------------------------------------------ locks and turns
    def _process_lock(self, user_id: str) -> threading.Lock:
        with self._guard:
            return self._process_locks.setdefault(user_id, threading.Lock())

    def _busy(self, user_id: str, holder: str) -> MemoryBusyError:
        return MemoryBusyError(
            f"the memory of user {user_id!r} is busy: {holder} held it for more than "
            f"{self.lock_timeout:g} s (lock_timeout); nothing was changed"
        )

    def _wait_process_lock(self, user_id: str, deadline: float) -> threading.Lock:
        """Take the user's lock in this process by `deadline`. A waiter holds the user's turnstile
        while it waits and every taker passes it first, so a thread that releases the lock and
        wants it back at once (a writer between two turns) queues behind the waiter."""
        with self._guard:
            turnstile = self._turnstiles.setdefault(user_id, threading.Lock())
        process_lock = self._process_lock(user_id)
        if not turnstile.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise self._busy(user_id, "another turn")
        try:
            if not process_lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
                raise self._busy(user_id, "another turn")
        finally:
            turnstile.release()
        return process_lock

    def _cross_process_lock(self, user_id: str, purpose: str, deadline: float):
        """Take the user's "turn" or "commit" lock across processes by `deadline`; returns it."""
        with self._guard:
            locks = self._user_locks.get(user_id)
            if locks is None:
                key = user_key(user_id)
                locks = self._user_locks[user_id] = {
                    "turn": self.records.lock(key, "turn"),
                    "commit": self.records.lock(key, "commit"),
                }
        lock = locks[purpose]
        if not lock.acquire(max(0.0, deadline - time.monotonic())):
            raise self._busy(user_id, "another process")
        return lock

    @contextmanager
    def holding_commits(self, user_id: str, deadline: float | None = None):
        """Hold the user's commit lock across processes (with embedded Chroma, whose readers take
        it): while a turn stores its rows and vectors, or loads what others stored."""
        if not self.chroma.embedded:
            yield
            return
        lock = self._cross_process_lock(user_id, "commit", deadline or time.monotonic() + self.lock_timeout)
        try:
            yield
        finally:
            lock.release()

    def _acquire(self, user_id: str, cross_process: bool) -> tuple[threading.Lock, object | None]:
        """Take the user's lock in this process (and its turn lock across processes), waiting up to
        `lock_timeout`."""
        deadline = time.monotonic() + self.lock_timeout
        process_lock = self._wait_process_lock(user_id, deadline)
        if not cross_process:
            return process_lock, None
        try:
            return process_lock, self._cross_process_lock(user_id, "turn", deadline)
        except BaseException:
            process_lock.release()
            raise

    def begin_turn(self, user_id: str, *, external: bool = False) -> TurnTransaction:
        """Open a turn of `user_id` (`TurnTransaction`), or join the one the current context holds
        (a graph run inside `exclusive`)."""
        validate_user_id(user_id)
        held = held_turn(user_id)
        return held if held is not None and not external else self._begin(user_id, external)

    def _begin(self, user_id: str, external: bool) -> TurnTransaction:
        process_lock, user_lock = self._acquire(user_id, cross_process=True)
        try:
            with self.holding_commits(user_id):  # opening and beginning can write (migration, index repair)
                memory = self.open(user_id, create=True)
                memory.begin()
        except BaseException:
            user_lock.release()
            process_lock.release()
            raise
        turn = TurnTransaction(self, user_id, uuid.uuid4().hex, memory, (process_lock, user_lock), external)
        if not external:
            turn.timer = threading.Timer(self.turn_timeout, turn.expire)
            turn.timer.daemon = True
            turn.timer.start()
        self._turns[user_id] = turn
        return turn

    def open_turn(self, user_id: str, owner: str | None = None) -> TurnTransaction | None:
        """The open turn of `user_id` (with that `owner`, if given), or None."""
        turn = self._turns.get(user_id)
        return turn if turn is not None and (owner is None or turn.owner == owner) else None

    def turn(self, user_id: str, owner: str) -> TurnTransaction:
        """The open turn of `user_id` that `owner` began; RuntimeError if it has ended."""
        turn = self.open_turn(user_id, owner)
        if turn is None:
            raise RuntimeError(
                f"no open turn of user {user_id!r} for this run (it was rolled back after "
                f"turn_timeout, or never begun); nothing of it was stored"
            )
        return turn

    def forget_turn(self, turn: TurnTransaction) -> None:
        if self._turns.get(turn.user_id) is turn:
            del self._turns[turn.user_id]

    @contextmanager
    def exclusive(self, user_id: str):
        """Hold a turn of the user for a block (PCM.process wraps the whole graph run in it, so the
        checkpoint is read and written by one writer at a time too). Yields the `TurnTransaction`;
        a graph run inside the block joins it; what was not committed when the block ends is
        rolled back."""
        turn = self.begin_turn(user_id, external=True)
        token = hold(turn)
        try:
            yield turn
        finally:
            _HELD.reset(token)
            if turn.is_open:
                turn.end()

    @contextmanager
    def reading(self, user_id: str):
        """A consistent read of a user's memory, with what other processes committed loaded.

        In this process it waits for a running turn of the user to end (a turn changes the open
        memory in place), behind at most one turn. Across processes it waits only while a turn
        stores its writes (the commit lock), not for the other process's turn: with embedded
        Chroma, which is not process-safe, vectors are never read while another process writes
        them. Opening a memory this process does not hold yet can write (a migration, an index
        repair), so that waits for the other process's turn, as a writer does."""
        if held_turn(user_id) is not None:
            yield self.open(user_id)
            return
        deadline = time.monotonic() + self.lock_timeout
        process_lock = self._wait_process_lock(user_id, deadline)
        try:
            if self.chroma.embedded and user_id not in self._memories:
                turn_lock = self._cross_process_lock(user_id, "turn", deadline)  # the turn lock first, as writers
                try:
                    with self.holding_commits(user_id, deadline):
                        self.open(user_id)
                finally:
                    turn_lock.release()
            with self.holding_commits(user_id, deadline):
                memory = self.open(user_id)
                memory.refresh()
                yield memory
        finally:
            process_lock.release()
