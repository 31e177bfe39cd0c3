"""The graph store: every user's nodes, edges, audit log and ingested message ids, as rows.

One SQL schema and one class, with two backends that differ only in how they connect and
lock: SQLite in WAL mode under the data directory (the default) and PostgreSQL (for a
deployment that already runs it, or several machines serving the same users).

A turn's writes are one transaction (`commit`): nothing of a turn is stored unless all of
it is. Each commit gets the next sequence number of its user, stamped on every row it
wrote, so another process can load just what changed since the sequence it has seen
(`changes_since`), and the vector index can be repaired after a crash from the rows
written after the last commit whose vectors are known to be written (`indexed_seq`).

Storage problems are one-line `StorageError`s naming the file or folder and what to do: an
empty, foreign, damaged or cut-short memory.sqlite (never taken for a new store), a full disk,
a folder this process cannot write. A read-only data directory is opened for reading.

The single writer per user is enforced by `lock(key)`: a file lock beside the SQLite
database, or a PostgreSQL advisory lock, held for the whole turn; `lock(key, "commit")` is
held only while a turn's writes are stored, and by readers (`MemoryStore` says how).
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import shutil
import sqlite3
import threading
import time
from contextlib import contextmanager, nullcontext
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


class StorageError(OSError):
    """The data directory cannot be used as it is: its disk is full, it is read-only, or it holds
    a damaged or foreign file. The message (one line) names the file or folder and what to do."""


#: SQLite's primary result codes (`sqlite3.Error.sqlite_errorcode & 0xFF`) for these cases
SQLITE_READONLY, SQLITE_IOERR, SQLITE_CORRUPT, SQLITE_FULL, SQLITE_NOTADB = 8, 10, 11, 13, 26
#: free bytes below which a disk counts as full when SQLite reports only "disk I/O error"
NEARLY_FULL_BYTES = 1 << 20


def _sqlite_code(error: BaseException) -> int | None:
    code = getattr(error, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def storage_problem(error: BaseException, folder: Path | None = None) -> str | None:
    """"full" if `error` says the disk is full, "read-only" if the place cannot be written, else None.

    SQLite reports a full disk as "disk I/O error" where it cannot tell (growing the -shm file of
    a WAL database when it opens one: SQLITE_IOERR_SHMSIZE), so an I/O error counts as a full
    disk when `folder`'s disk has (nearly) no space left."""
    if isinstance(error, StorageError):
        return None
    if isinstance(error, OSError):
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            return "full"
        if error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return "read-only"
        return None
    text = str(error).lower()
    if _sqlite_code(error) == SQLITE_FULL or "database or disk is full" in text or "no space left" in text:
        return "full"
    if _sqlite_code(error) == SQLITE_READONLY or "readonly database" in text or "read-only file system" in text:
        return "read-only"
    if folder is not None and (_sqlite_code(error) == SQLITE_IOERR or "disk i/o error" in text):
        try:
            if shutil.disk_usage(folder).free < NEARLY_FULL_BYTES:
                return "full"
        except OSError:
            pass
    return None


def storage_error(error: BaseException, path: str | Path, folder: str | Path | None = None) -> StorageError | None:
    """A one-line `StorageError` for a full disk or an unwritable place at `path` (a file or a
    folder) in `folder` (by default its own), or None when `error` is something else."""
    path = Path(path)
    folder = Path(folder) if folder is not None else path if path.is_dir() else path.parent
    problem = storage_problem(error, folder)
    if problem is None:
        return None
    if problem == "full":
        return StorageError(f"no space left on the disk holding {folder}: free some space there, then run the "
                            "command again")
    return StorageError(f"{folder} is read-only: nothing can be stored there; make it writable (e.g. chmod -R u+w "
                        f"{folder}) or use another data directory")


def is_damaged(error: BaseException) -> bool:
    """Whether a (SQLite or Chroma) error says a database file is damaged or not a database."""
    text = str(error).lower()
    return (_sqlite_code(error) in (SQLITE_CORRUPT, SQLITE_NOTADB) or "malformed" in text
            or "not a database" in text)


def writable(folder: Path, *files: Path) -> bool:
    """Whether this process may create and change files in `folder` (and change those given)."""
    return os.access(folder, os.W_OK) and all(os.access(f, os.W_OK) for f in files if f.exists())


def move_aside(path: Path) -> Path:
    """Rename a damaged file or folder to `<name>.damaged-<time>` (a SQLite file with its -wal and
    -shm files), so that a new one can be made and the old one is kept; returns the new path."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    number = 1
    while target.exists():
        number += 1
        target = path.with_name(f"{path.name}.damaged-{stamp}-{number}")
    path.rename(target)
    for suffix in ("-wal", "-shm"):
        companion = path.with_name(path.name + suffix)
        if companion.exists():
            companion.rename(target.with_name(target.name + suffix))
    return target


def open_sqlite_read_only(path: Path, **options) -> sqlite3.Connection:
    """A read-only connection to a SQLite file in a folder this process cannot write.

    A database in WAL mode is read through its -shm file, which SQLite cannot create there
    ("attempt to write a readonly database"). Unless a -wal file holds writes not yet merged
    into the database (then it is refused: they would be missed), the file is opened as
    immutable, which needs neither."""
    uri = path.absolute().as_uri()
    connection = sqlite3.connect(f"{uri}?mode=ro", uri=True, **options)
    try:
        connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return connection
    except sqlite3.OperationalError as error:
        connection.close()
        wal = path.with_name(path.name + "-wal")
        if storage_problem(error) != "read-only" and "unable to open" not in str(error):
            raise
        if wal.exists() and wal.stat().st_size > 0:
            raise StorageError(f"cannot read {path}: {path.parent} is read-only and {wal.name} holds writes not yet "
                               f"merged into it; make the folder writable (e.g. chmod -R u+w {path.parent}) and "
                               "run the command again") from None
    return sqlite3.connect(f"{uri}?immutable=1", uri=True, **options)


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
    """A per-user lock file (fcntl via `filelock`), usable from any thread of the holder, that
    lets waiters in turn by turn.

    `filelock` waits by polling, so a holder that releases and at once acquires again (a writer
    between two turns of an ingestion) nearly always wins again: a search of the same user
    waited 14-15 s, for the writer's whole run. So a waiter holds a second file, the turnstile,
    while it waits, and every acquirer passes the turnstile first: a holder that wants the lock
    back waits at the turnstile until the waiter has the lock (at most one hold later)."""

    POLL_SECONDS = 0.005

    def __init__(self, path: Path):
        from filelock import FileLock

        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(str(path), thread_local=False)
        self._turnstile = FileLock(str(path.with_name(path.name + ".turnstile")), thread_local=False)

    def acquire(self, timeout: float) -> bool:
        from filelock import Timeout

        deadline = time.monotonic() + max(0.0, timeout)
        try:
            self._turnstile.acquire(timeout=max(0.0, timeout), poll_interval=self.POLL_SECONDS)
        except Timeout:
            return False
        try:
            self._lock.acquire(timeout=max(0.0, deadline - time.monotonic()), poll_interval=self.POLL_SECONDS)
            return True
        except Timeout:
            return False
        finally:
            self._turnstile.release(force=True)

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


def _unusable(path: Path, error: BaseException) -> BaseException:
    """The error to raise when SQLite could not open `path`: a one-line `StorageError` for a full
    disk, an unwritable folder, or a damaged or foreign file; otherwise `error` itself."""
    translated = storage_error(error, path)
    if translated is not None:
        return translated
    if _sqlite_code(error) == SQLITE_NOTADB or "not a database" in str(error):
        return StorageError(f"{path} is not a SQLite database (it is damaged, or another kind of file): restore it "
                            "from a backup, or move it away to start a new, empty memory")
    if is_damaged(error):
        return StorageError(f"{path} is damaged ({error}): restore it from a backup, or move it away to start a "
                            "new, empty memory")
    return error


def _check_is_memory(path: Path, connection: sqlite3.Connection, read_only: bool) -> None:
    """Raise `StorageError` (and close the connection) unless `path` is PCM's memory, or a new
    database with no tables yet (which it becomes, unless it cannot be written)."""
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        cut_short = truncation(connection, path)
    except sqlite3.DatabaseError as error:
        connection.close()
        raise _unusable(path, error) from None
    if cut_short:
        connection.close()
        raise StorageError(f"{path} is damaged ({cut_short}): restore it from a backup, or move it away to start a "
                           "new, empty memory")
    if (tables or read_only) and not any(name.startswith("pcm_") for name in tables):
        connection.close()
        listed = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise StorageError(f"{path} is a SQLite database of something else (tables: {listed or 'none'}), not a PCM "
                           "memory: use another data directory, or move the file away")


def truncation(connection: sqlite3.Connection, path: Path) -> str | None:
    """How the database file was cut short, if its header counts more pages than the file holds
    (checked only while its -wal file holds no pages: they may extend a database legitimately)."""
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        return None
    pages, page_size = (connection.execute(f"PRAGMA {name}").fetchone()[0] for name in ("page_count", "page_size"))
    expected = pages * page_size
    actual = path.stat().st_size
    return f"cut short: {actual:,} of {expected:,} bytes" if actual < expected else None


def _open_memory_file(path: Path, timeout: float) -> tuple[sqlite3.Connection, bool]:
    """(connection, read_only) to memory.sqlite: for writing, or read-only when this process
    cannot write its folder (so that reading commands work on a read-only data directory).

    A missing file is a new store. An empty (0-byte) file, a file that is not a SQLite database,
    one cut short, or a SQLite database of something else raises `StorageError` and is left
    untouched (it is looked at read-only first): taking it for a new store would hide that the
    memory is gone, and writing into it would mix ours with someone else's. A new file is empty
    until SQLite writes its header, so its creator holds a lock meanwhile, and a process that
    finds an empty file waits for that lock before it calls the file emptied."""
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise (storage_error(error, folder) or error) from None
    read_only = not writable(folder, path)
    if read_only:
        if not path.exists():
            raise StorageError(f"{folder} is read-only and holds no memory ({path.name}); make it writable (e.g. "
                               f"chmod -R u+w {folder}) or use another data directory")
        try:
            connection = open_sqlite_read_only(path, check_same_thread=False, isolation_level=None)
        except sqlite3.DatabaseError as error:
            raise _unusable(path, error) from None
        _check_is_memory(path, connection, read_only=True)
        logger.info("%s is read-only: its memory is opened for reading only", folder)
        return connection, True
    from filelock import FileLock

    creating = not path.exists() or path.stat().st_size == 0
    if creating:
        (folder / "locks").mkdir(exist_ok=True)
    with FileLock(str(folder / "locks" / f"{path.name}.lock")) if creating else nullcontext():
        if path.exists() and path.stat().st_size == 0:
            raise StorageError(f"{path} is empty (0 bytes), not a PCM memory: restore it from a backup, or delete it "
                               "to start a new, empty memory")
        if path.exists():
            try:
                peek = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
            except sqlite3.DatabaseError as error:
                raise _unusable(path, error) from None
            _check_is_memory(path, peek, read_only=False)
            peek.close()
        try:
            return _open_sqlite(path, timeout), False
        except sqlite3.DatabaseError as error:
            raise _unusable(path, error) from None


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
            self._connection, self.read_only = _open_memory_file(self.path, timeout=60.0)
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

    def message_ids(self, key: str, prefix: str) -> list[str]:
        """The user's stored message ids that start with `prefix` (case-sensitive on both backends)."""
        return [r[0] for r in self._rows("SELECT message_id FROM pcm_messages WHERE user_key = ? AND "
                                         "substr(message_id, 1, ?) = ?", (key, len(prefix), prefix))]

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
