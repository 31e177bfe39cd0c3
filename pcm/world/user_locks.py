"""The locks that make one writer per user: a lock file beside the SQLite database, or a
PostgreSQL advisory lock (`GraphRecords.lock` makes them; `MemoryStore` says when each is held).
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path


class MemoryBusyError(TimeoutError):
    """Another turn held the user's memory for longer than `lock_timeout`; nothing was changed."""


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
