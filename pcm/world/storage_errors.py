"""Storage problems as one-line errors that name the file or folder and what to do.

A full disk, a folder this process cannot write, or a damaged or foreign file is a
`StorageError` (an OSError), whichever store met it: the graph store, the vector index, the
checkpoints. `storage_problem` and `is_damaged` read what SQLite, Chroma or the OS raised.
"""

from __future__ import annotations

import errno
import shutil
from pathlib import Path


class StorageError(OSError):
    """The data directory cannot be used as it is: its disk is full, it is read-only, or it holds
    a damaged or foreign file. The message (one line) names the file or folder and what to do."""


#: SQLite's primary result codes (`sqlite3.Error.sqlite_errorcode & 0xFF`) for these cases
SQLITE_READONLY, SQLITE_IOERR, SQLITE_CORRUPT, SQLITE_FULL, SQLITE_NOTADB = 8, 10, 11, 13, 26
#: free bytes below which a disk counts as full when SQLite reports only "disk I/O error"
NEARLY_FULL_BYTES = 1 << 20


def sqlite_code(error: BaseException) -> int | None:
    """SQLite's primary result code of `error`, if SQLite raised it."""
    code = getattr(error, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def storage_problem(error: BaseException, folder: Path | None = None) -> str | None:
    """ "full" if `error` says the disk is full, "read-only" if the place cannot be written, else None.

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
    if sqlite_code(error) == SQLITE_FULL or "database or disk is full" in text or "no space left" in text:
        return "full"
    if sqlite_code(error) == SQLITE_READONLY or "readonly database" in text or "read-only file system" in text:
        return "read-only"
    if folder is not None and (sqlite_code(error) == SQLITE_IOERR or "disk i/o error" in text):
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
        return StorageError(
            f"no space left on the disk holding {folder}: free some space there, then run the command again"
        )
    return StorageError(
        f"{folder} is read-only: nothing can be stored there; make it writable (e.g. chmod -R u+w "
        f"{folder}) or use another data directory"
    )


def is_damaged(error: BaseException) -> bool:
    """Whether a (SQLite or Chroma) error says a database file is damaged or not a database."""
    text = str(error).lower()
    return sqlite_code(error) in (SQLITE_CORRUPT, SQLITE_NOTADB) or "malformed" in text or "not a database" in text
