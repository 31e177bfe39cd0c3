"""The graph store: every user's nodes, edges, audit log and ingested message ids, as rows.

One SQL schema and one class, with two backends that differ only in how they connect and
lock: SQLite in WAL mode under the data directory (the default; `pcm.world.sqlite_files` opens
it) and PostgreSQL (for a deployment that already runs it, or several machines serving the
same users).

A turn's writes are one transaction (`commit`): nothing of a turn is stored unless all of
it is. Each commit gets the next sequence number of its user, stamped on every row it
wrote, so another process can load just what changed since the sequence it has seen
(`nodes` and `edges` after `after_seq`), and the vector index can be repaired after a crash
from the rows written after the last commit whose vectors are known to be written
(`indexed_seq`).

Storage problems are one-line `StorageError`s (`pcm.world.storage_errors`) naming the file or
folder and what to do: an empty, foreign, damaged or cut-short memory.sqlite (never taken for a
new store), a full disk, a folder this process cannot write. A read-only data directory is
opened for reading.

The single writer per user is enforced by `lock(key)` (`pcm.world.user_locks`): a file lock
beside the SQLite database, or a PostgreSQL advisory lock, held for the whole turn;
`lock(key, "commit")` is held only while a turn's writes are stored, and by readers
(`MemoryStore` says how).
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pcm.world.sqlite_files import open_memory_file
from pcm.world.storage_errors import storage_error
from pcm.world.user_locks import AdvisoryUserLock, FileUserLock

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


class GraphRecords:
    """The SQL store of all users' graphs (one database, rows keyed by user key).

    `read_only`: the SQLite data directory cannot be written by this process; its memory can be
    read, and a write raises `StorageError` saying so."""

    def __init__(self, backend: str = "sqlite", data_dir: str | Path = "./data", url: str = ""):
        self.backend = backend
        self.data_dir = Path(data_dir)
        self.url = url
        self._guard = threading.RLock()
        self.read_only = False
        #: the SQLite file (None for PostgreSQL): what storage errors name
        self.path: Path | None = None
        if backend == "sqlite":
            self.path = self.data_dir / "memory.sqlite"
            self._connection, self.read_only = open_memory_file(self.path, timeout=60.0)
            self._placeholder = "?"
            serial = "INTEGER"
        elif backend == "postgres":
            if not url:
                raise ValueError(
                    "graph_store 'postgres' needs postgres_url (e.g. postgresql://user@127.0.0.1:5432/pcm)"
                )
            import psycopg

            self._connection = psycopg.connect(url, autocommit=True)
            self._placeholder = "%s"
            serial = "BIGSERIAL"
        else:
            raise ValueError(f"graph_store must be 'sqlite' or 'postgres', not {backend!r}")
        if self.read_only:
            return
        with self._transaction() as cursor:
            for statement in SCHEMA.format(serial=serial).split(";"):
                if statement.strip():
                    cursor.execute(statement)

    # ------------------------------------------------------------------ plumbing
    def _sql(self, statement: str) -> str:
        return statement if self._placeholder == "?" else statement.replace("?", "%s")

    @contextmanager
    def _transaction(self):
        """One transaction: all of its writes are stored, or none. A full disk or an unwritable
        folder raises `StorageError` (after the rollback)."""
        with self._guard:
            if self.backend == "sqlite":
                cursor = self._connection.cursor()
                try:
                    cursor.execute("BEGIN IMMEDIATE")
                    try:
                        yield cursor
                        cursor.execute("COMMIT")
                    except BaseException:
                        # SQLite may have rolled back already (it does on a full disk)
                        if self._connection.in_transaction:
                            cursor.execute("ROLLBACK")
                        raise
                except (sqlite3.Error, OSError) as error:
                    translated = storage_error(error, self.path)
                    if translated is None:
                        raise
                    raise translated from error
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

    def lock(self, key: str, purpose: str = "turn"):
        """A new lock object of one user (acquire(timeout) → bool, release()): "turn", held by a
        writer for a whole turn, or "commit", held by a writer while it writes a turn's rows and
        vectors and by a reader while it reads them (see `MemoryStore.reading`)."""
        if purpose not in ("turn", "commit"):
            raise ValueError(f"lock purpose must be 'turn' or 'commit', not {purpose!r}")
        name = key if purpose == "turn" else f"{key}.{purpose}"
        if self.backend == "sqlite":
            return FileUserLock(self.data_dir / "locks" / f"{name}.lock")
        return AdvisoryUserLock(self.url, name)

    # ------------------------------------------------------------------ reading
    def user(self, key: str) -> UserRow | None:
        rows = self._rows("SELECT user_id, seq, indexed_seq FROM pcm_users WHERE user_key = ?", (key,))
        return UserRow(*rows[0]) if rows else None

    def users(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT user_id FROM pcm_users ORDER BY user_id")]

    def nodes(self, key: str, after_seq: int = 0) -> list[tuple[str, int, str, str]]:
        """(id, ord, attrs, words) of the user's nodes written after `after_seq`, in insertion order."""
        return self._rows(
            "SELECT id, ord, attrs, words FROM pcm_nodes WHERE user_key = ? AND seq > ? ORDER BY ord", (key, after_seq)
        )

    def edges(self, key: str, after_seq: int = 0) -> list[tuple[str, str, str]]:
        return self._rows(
            "SELECT source, target, attrs FROM pcm_edges WHERE user_key = ? AND seq > ? ORDER BY seq, source, target",
            (key, after_seq),
        )

    def history(self, key: str, node_id: str) -> list[str]:
        return [
            r[0]
            for r in self._rows(
                "SELECT event FROM pcm_audit WHERE user_key = ? AND node_id = ? ORDER BY position", (key, node_id)
            )
        ]

    def audit(self, key: str, until: float | None = None) -> list[str]:
        """The user's audit events in order, optionally only those stamped at or before `until`."""
        if until is None:
            rows = self._rows("SELECT event FROM pcm_audit WHERE user_key = ? ORDER BY position", (key,))
        else:
            rows = self._rows(
                "SELECT event FROM pcm_audit WHERE user_key = ? AND at <= ? ORDER BY position", (key, until)
            )
        return [r[0] for r in rows]

    def has_message(self, key: str, message_id: str) -> bool:
        return bool(self._rows("SELECT 1 FROM pcm_messages WHERE user_key = ? AND message_id = ?", (key, message_id)))

    def message_ids(self, key: str, prefix: str) -> list[str]:
        """The user's stored message ids that start with `prefix` (case-sensitive on both backends)."""
        return [
            r[0]
            for r in self._rows(
                "SELECT message_id FROM pcm_messages WHERE user_key = ? AND substr(message_id, 1, ?) = ?",
                (key, len(prefix), prefix),
            )
        ]

    def node_count(self, key: str) -> int:
        return int(self._rows("SELECT COUNT(*) FROM pcm_nodes WHERE user_key = ?", (key,))[0][0])

    def integrity_problems(self, limit: int = 5) -> list[str]:
        """What SQLite's `PRAGMA quick_check` finds wrong with the database (reads all of it: for
        `pcm repair`); empty when sound, and always for PostgreSQL, which checks its own pages."""
        if self.backend != "sqlite":
            return []
        try:
            found = [" ".join(row[0].split()) for row in self._rows(f"PRAGMA quick_check({int(limit)})")]
        except sqlite3.DatabaseError as error:
            return [str(error)]
        return [] if found == ["ok"] else found

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
            cursor.execute(
                sql(
                    "INSERT INTO pcm_users (user_key, user_id, seq, indexed_seq) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (user_key) DO UPDATE SET seq = excluded.seq, "
                    "indexed_seq = excluded.indexed_seq"
                ),
                (key, user_id, seq, indexed),
            )
            if rows.nodes:
                cursor.executemany(
                    sql(
                        "INSERT INTO pcm_nodes (user_key, id, ord, attrs, words, seq) "
                        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_key, id) DO UPDATE SET "
                        "attrs = excluded.attrs, seq = excluded.seq"
                    ),
                    [(key, i, o, a, w, seq) for i, o, a, w in rows.nodes],
                )
            if rows.edges:
                cursor.executemany(
                    sql(
                        "INSERT INTO pcm_edges (user_key, source, target, attrs, seq) "
                        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (user_key, source, target) DO UPDATE "
                        "SET attrs = excluded.attrs, seq = excluded.seq"
                    ),
                    [(key, s, t, a, seq) for s, t, a in rows.edges],
                )
            if rows.events:
                cursor.executemany(
                    sql("INSERT INTO pcm_audit (user_key, node_id, at, event, seq) VALUES (?, ?, ?, ?, ?)"),
                    [(key, n, at, e, seq) for n, at, e in rows.events],
                )
            if rows.messages:
                cursor.executemany(
                    sql("INSERT INTO pcm_messages (user_key, message_id, seq) VALUES (?, ?, ?)"),
                    [(key, m, seq) for m in rows.messages],
                )
            return seq

    def update_words(self, key: str, words: list[tuple[str, str]]) -> None:
        """Replace the stored words of some nodes (after the tokeniser changed)."""
        with self._transaction() as cursor:
            cursor.executemany(
                self._sql("UPDATE pcm_nodes SET words = ? WHERE user_key = ? AND id = ?"),
                [(w, key, i) for i, w in words],
            )

    def mark_indexed(self, key: str, seq: int) -> None:
        """Record that the vectors of every commit up to `seq` are written (after a repair)."""
        with self._transaction() as cursor:
            cursor.execute(
                self._sql("UPDATE pcm_users SET indexed_seq = ? WHERE user_key = ? AND indexed_seq < ?"),
                (seq, key, seq),
            )
