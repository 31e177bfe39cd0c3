"""The graph store: every user's nodes, edges, audit log and ingested message ids, as rows.

One SQL schema and one class, with two backends that differ only in how they connect and
lock: SQLite in WAL mode under the data directory (the default) and PostgreSQL (for a
deployment that already runs it, or several machines serving the same users).

A turn's writes are one transaction (`commit`): nothing of a turn is stored unless all of
it is. Each commit gets the next sequence number of its user, stamped on every row it
wrote, so another process can load just what changed since the sequence it has seen
(`changes_since`), and the vector index can be repaired after a crash from the rows
written after the last commit whose vectors are known to be written (`indexed_seq`).

The single writer per user is enforced by `lock(key)`: a file lock beside the SQLite
database, or a PostgreSQL advisory lock, held for the whole turn.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS pcm_users (
    user_key TEXT PRIMARY KEY, user_id TEXT NOT NULL, seq BIGINT NOT NULL, indexed_seq BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS pcm_nodes (
    user_key TEXT NOT NULL, id TEXT NOT NULL, ord BIGINT NOT NULL, attrs TEXT NOT NULL, words TEXT NOT NULL,
    seq BIGINT NOT NULL, PRIMARY KEY (user_key, id));
CREATE INDEX IF NOT EXISTS pcm_nodes_seq ON pcm_nodes (user_key, seq);
CREATE TABLE IF NOT EXISTS pcm_edges (
    user_key TEXT NOT NULL, source TEXT NOT NULL, target TEXT NOT NULL, attrs TEXT NOT NULL, seq BIGINT NOT NULL,
    PRIMARY KEY (user_key, source, target));
CREATE INDEX IF NOT EXISTS pcm_edges_seq ON pcm_edges (user_key, seq);
CREATE TABLE IF NOT EXISTS pcm_audit (
    position {serial} PRIMARY KEY, user_key TEXT NOT NULL, node_id TEXT NOT NULL, at DOUBLE PRECISION NOT NULL,
    event TEXT NOT NULL, seq BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS pcm_audit_node ON pcm_audit (user_key, node_id);
CREATE INDEX IF NOT EXISTS pcm_audit_at ON pcm_audit (user_key, at);
CREATE TABLE IF NOT EXISTS pcm_messages (
    user_key TEXT NOT NULL, message_id TEXT NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (user_key, message_id));
"""


class MemoryBusyError(TimeoutError):
    """Another turn held the user's memory for longer than `lock_timeout`; nothing was changed."""


@dataclass
class CommitRows:
    """Everything one commit writes for one user."""

    nodes: list[tuple[str, int, str, str]] = field(default_factory=list)  # id, ord, attrs json, words json
    edges: list[tuple[str, str, str]] = field(default_factory=list)  # source, target, attrs json
    events: list[tuple[str, float, str]] = field(default_factory=list)  # node id, epoch, event json
    messages: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.nodes or self.edges or self.events or self.messages)


@dataclass
class UserRow:
    user_id: str
    seq: int
    indexed_seq: int


class FileUserLock:
    """A per-user lock file (fcntl via `filelock`), usable from any thread of the holder."""

    def __init__(self, path: Path):
        from filelock import FileLock

        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(str(path), thread_local=False)

    def acquire(self, timeout: float) -> bool:
        from filelock import Timeout

        try:
            self._lock.acquire(timeout=max(0.0, timeout))
            return True
        except Timeout:
            return False

    def release(self) -> None:
        self._lock.release(force=True)


class AdvisoryUserLock:
    """A PostgreSQL session advisory lock on a connection of its own, held for the turn."""

    def __init__(self, url: str, key: str):
        self.url = url
        self.number = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)
        self._connection = None

    def acquire(self, timeout: float) -> bool:
        import psycopg

        deadline = time.monotonic() + max(0.0, timeout)
        connection = psycopg.connect(self.url, autocommit=True)
        while True:
            if connection.execute("SELECT pg_try_advisory_lock(%s)", (self.number,)).fetchone()[0]:
                self._connection = connection
                return True
            if time.monotonic() >= deadline:
                connection.close()
                return False
            time.sleep(0.02)

    def release(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.execute("SELECT pg_advisory_unlock(%s)", (self.number,))
            finally:
                connection.close()


def _open_sqlite(path: Path, timeout: float) -> sqlite3.Connection:
    """A connection in WAL mode with a busy timeout.

    Switching a new file to WAL needs an exclusive lock, and SQLite answers "database is locked"
    at once, without its busy handler, when another process is switching it or writing at that
    moment (two processes opening a new data directory together did, in CI). So the switch is
    retried until `timeout`."""
    connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=timeout)
    connection.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            if connection.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            return connection
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) and "busy" not in str(error) or time.monotonic() >= deadline:
                connection.close()
                raise
            time.sleep(delay)
            delay = min(0.2, delay * 2)


class GraphRecords:
    """The SQL store of all users' graphs (one database, rows keyed by user key)."""

    def __init__(self, backend: str = "sqlite", data_dir: str | Path = "./data", url: str = ""):
        self.backend = backend
        self.data_dir = Path(data_dir)
        self.url = url
        self._guard = threading.RLock()
        if backend == "sqlite":
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self._connection = _open_sqlite(self.data_dir / "memory.sqlite", timeout=60.0)
            self._placeholder = "?"
            serial = "INTEGER"
        elif backend == "postgres":
            if not url:
                raise ValueError("graph_store 'postgres' needs postgres_url (e.g. postgresql://user@127.0.0.1:5432/pcm)")
            import psycopg

            self._connection = psycopg.connect(url, autocommit=True)
            self._placeholder = "%s"
            serial = "BIGSERIAL"
        else:
            raise ValueError(f"graph_store must be 'sqlite' or 'postgres', not {backend!r}")
        with self._transaction() as cursor:
            for statement in SCHEMA.format(serial=serial).split(";"):
                if statement.strip():
                    cursor.execute(statement)

    # ------------------------------------------------------------------ plumbing
    def _sql(self, statement: str) -> str:
        return statement if self._placeholder == "?" else statement.replace("?", "%s")

    @contextmanager
    def _transaction(self):
        with self._guard:
            if self.backend == "sqlite":
                cursor = self._connection.cursor()
                cursor.execute("BEGIN IMMEDIATE")
                try:
                    yield cursor
                except BaseException:
                    cursor.execute("ROLLBACK")
                    raise
                cursor.execute("COMMIT")
            else:
                with self._connection.transaction(), self._connection.cursor() as cursor:
                    yield cursor

    def _rows(self, statement: str, parameters: tuple = ()) -> list[tuple]:
        with self._guard:
            cursor = self._connection.cursor()
            try:
                cursor.execute(self._sql(statement), parameters)
                return list(cursor.fetchall())
            finally:
                cursor.close()

    def close(self) -> None:
        with self._guard:
            self._connection.close()

    def lock(self, key: str):
        """A new lock object for one user's turns (acquire(timeout) → bool, release())."""
        if self.backend == "sqlite":
            return FileUserLock(self.data_dir / "locks" / f"{key}.lock")
        return AdvisoryUserLock(self.url, key)

    # ------------------------------------------------------------------ reading
    def user(self, key: str) -> UserRow | None:
        rows = self._rows("SELECT user_id, seq, indexed_seq FROM pcm_users WHERE user_key = ?", (key,))
        return UserRow(*rows[0]) if rows else None

    def users(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT user_id FROM pcm_users ORDER BY user_id")]

    def nodes(self, key: str, after_seq: int = 0) -> list[tuple[str, int, str, str]]:
        """(id, ord, attrs, words) of the user's nodes written after `after_seq`, in insertion order."""
        return self._rows("SELECT id, ord, attrs, words FROM pcm_nodes WHERE user_key = ? AND seq > ? ORDER BY ord",
                          (key, after_seq))

    def edges(self, key: str, after_seq: int = 0) -> list[tuple[str, str, str]]:
        return self._rows("SELECT source, target, attrs FROM pcm_edges WHERE user_key = ? AND seq > ? "
                          "ORDER BY seq, source, target", (key, after_seq))

    def history(self, key: str, node_id: str) -> list[str]:
        return [r[0] for r in self._rows("SELECT event FROM pcm_audit WHERE user_key = ? AND node_id = ? "
                                         "ORDER BY position", (key, node_id))]

    def audit(self, key: str, until: float | None = None) -> list[str]:
        """The user's audit events in order, optionally only those stamped at or before `until`."""
        if until is None:
            rows = self._rows("SELECT event FROM pcm_audit WHERE user_key = ? ORDER BY position", (key,))
        else:
            rows = self._rows("SELECT event FROM pcm_audit WHERE user_key = ? AND at <= ? ORDER BY position",
                              (key, until))
        return [r[0] for r in rows]

    def has_message(self, key: str, message_id: str) -> bool:
        return bool(self._rows("SELECT 1 FROM pcm_messages WHERE user_key = ? AND message_id = ?", (key, message_id)))

    def node_count(self, key: str) -> int:
        return int(self._rows("SELECT COUNT(*) FROM pcm_nodes WHERE user_key = ?", (key,))[0][0])

    # ------------------------------------------------------------------ writing
    def commit(self, key: str, user_id: str, rows: CommitRows, indexed_seq: int | None = None) -> int:
        """Write one turn in one transaction; returns its sequence number. `indexed_seq` records
        that the vectors of every commit up to it are written."""
        with self._transaction() as cursor:
            sql = self._sql
            cursor.execute(sql("SELECT seq, indexed_seq FROM pcm_users WHERE user_key = ?"), (key,))
            found = cursor.fetchone()
            seq = (found[0] if found else 0) + 1
            indexed = max(found[1] if found else 0, indexed_seq or 0)
            cursor.execute(sql("INSERT INTO pcm_users (user_key, user_id, seq, indexed_seq) VALUES (?, ?, ?, ?) "
                               "ON CONFLICT (user_key) DO UPDATE SET seq = excluded.seq, "
                               "indexed_seq = excluded.indexed_seq"), (key, user_id, seq, indexed))
            if rows.nodes:
                cursor.executemany(sql("INSERT INTO pcm_nodes (user_key, id, ord, attrs, words, seq) "
                                       "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_key, id) DO UPDATE SET "
                                       "attrs = excluded.attrs, seq = excluded.seq"),
                                   [(key, i, o, a, w, seq) for i, o, a, w in rows.nodes])
            if rows.edges:
                cursor.executemany(sql("INSERT INTO pcm_edges (user_key, source, target, attrs, seq) "
                                       "VALUES (?, ?, ?, ?, ?) ON CONFLICT (user_key, source, target) DO UPDATE "
                                       "SET attrs = excluded.attrs, seq = excluded.seq"),
                                   [(key, s, t, a, seq) for s, t, a in rows.edges])
            if rows.events:
                cursor.executemany(sql("INSERT INTO pcm_audit (user_key, node_id, at, event, seq) "
                                       "VALUES (?, ?, ?, ?, ?)"), [(key, n, at, e, seq) for n, at, e in rows.events])
            if rows.messages:
                cursor.executemany(sql("INSERT INTO pcm_messages (user_key, message_id, seq) VALUES (?, ?, ?)"),
                                   [(key, m, seq) for m in rows.messages])
            return seq

    def update_words(self, key: str, words: list[tuple[str, str]]) -> None:
        """Replace the stored words of some nodes (after the tokeniser changed)."""
        with self._transaction() as cursor:
            cursor.executemany(self._sql("UPDATE pcm_nodes SET words = ? WHERE user_key = ? AND id = ?"),
                               [(w, key, i) for i, w in words])

    def mark_indexed(self, key: str, seq: int) -> None:
        """Record that the vectors of every commit up to `seq` are written (after a repair)."""
        with self._transaction() as cursor:
            cursor.execute(self._sql("UPDATE pcm_users SET indexed_seq = ? WHERE user_key = ? AND indexed_seq < ?"),
                           (seq, key, seq))
