"""Opening and inspecting SQLite files: memory.sqlite, and files read where nothing can be written.

memory.sqlite is opened in WAL mode with a busy timeout, and looked at read-only first: an empty
(0-byte) file, a file that is not a SQLite database, one cut short, or a SQLite database of
something else raises `StorageError` and is left untouched, and a folder this process cannot
write is opened for reading. A damaged file or folder is moved aside (`move_aside`), not deleted.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from contextlib import nullcontext
from pathlib import Path

from pcm.world.storage_errors import (
    SQLITE_NOTADB,
    StorageError,
    is_damaged,
    sqlite_code,
    storage_error,
    storage_problem,
)

logger = logging.getLogger(__name__)


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
            raise StorageError(
                f"cannot read {path}: {path.parent} is read-only and {wal.name} holds writes not yet "
                f"merged into it; make the folder writable (e.g. chmod -R u+w {path.parent}) and "
                "run the command again"
            ) from None
    return sqlite3.connect(f"{uri}?immutable=1", uri=True, **options)


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
    if sqlite_code(error) == SQLITE_NOTADB or "not a database" in str(error):
        return StorageError(
            f"{path} is not a SQLite database (it is damaged, or another kind of file): restore it "
            "from a backup, or move it away to start a new, empty memory"
        )
    if is_damaged(error):
        return StorageError(
            f"{path} is damaged ({error}): restore it from a backup, or move it away to start a new, empty memory"
        )
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
        raise StorageError(
            f"{path} is damaged ({cut_short}): restore it from a backup, or move it away to start a new, empty memory"
        )
    if (tables or read_only) and not any(name.startswith("pcm_") for name in tables):
        connection.close()
        listed = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise StorageError(
            f"{path} is a SQLite database of something else (tables: {listed or 'none'}), not a PCM "
            "memory: use another data directory, or move the file away"
        )


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


def open_memory_file(path: Path, timeout: float) -> tuple[sqlite3.Connection, bool]:
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
            raise StorageError(
                f"{folder} is read-only and holds no memory ({path.name}); make it writable (e.g. "
                f"chmod -R u+w {folder}) or use another data directory"
            )
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
            raise StorageError(
                f"{path} is empty (0 bytes), not a PCM memory: restore it from a backup, or delete it "
                "to start a new, empty memory"
            )
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
