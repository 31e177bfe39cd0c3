"""Checkpointers: where working memory (each thread's recent turns) persists between turns.

SQLite under the data directory (the default) or PostgreSQL (`checkpointer`). Long-term memory
never depends on them: a damaged SQLite checkpoint database is moved aside and a new one made.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from pcm.config import PCMContext
from pcm.world.sqlite_files import move_aside, open_sqlite_read_only, truncation, writable
from pcm.world.storage_errors import StorageError, is_damaged, storage_error

logger = logging.getLogger(__name__)


def sqlite_checkpointer(data_dir: str | Path):
    """A SQLite checkpointer under the data directory (working memory survives restarts); see
    `open_checkpoints`."""
    return open_checkpoints(data_dir)[0]


def _checkpoint_saver(database: Path, thorough: bool):
    """A SqliteSaver on `database` with its tables made; sqlite3.DatabaseError if it is damaged."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    connection = sqlite3.connect(database, check_same_thread=False, timeout=60)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        cut_short = truncation(connection, database)
        if cut_short:
            raise sqlite3.DatabaseError(f"database disk image is malformed ({cut_short})")
        saver = SqliteSaver(connection)
        saver.setup()  # reads the schema: a garbled file fails here or above
        if thorough:
            found = connection.execute("PRAGMA quick_check(1)").fetchone()[0]
            if found != "ok":
                raise sqlite3.DatabaseError(f"database disk image is malformed ({found})")
        return saver
    except BaseException:
        connection.close()
        raise


def open_checkpoints(data_dir: str | Path, thorough: bool = False):
    """(checkpointer, where a damaged checkpoint database was moved or None) for the data directory.

    The checkpoints hold working memory: the recent turns of each thread not yet consolidated.
    Long-term memory does not depend on them, so a damaged checkpoint database does not stop PCM
    from opening: it is moved aside (`checkpoints.sqlite.damaged-<time>`, kept for inspection)
    and a new, empty one made, with a warning that working memory was reset. Opening reads only
    the schema; `thorough` (`pcm repair`) reads every page. In a folder this process cannot
    write, the database is opened read-only (no turn can be stored there anyway)."""
    folder = Path(data_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise (storage_error(error, folder) or error) from None
    database = folder / "checkpoints.sqlite"
    if not writable(folder, database):
        return _read_only_checkpointer(database), None
    try:
        return _checkpoint_saver(database, thorough), None
    except sqlite3.DatabaseError as error:
        translated = storage_error(error, database)
        if translated is not None:
            raise translated from None
        if not is_damaged(error):
            raise
        moved = move_aside(database)
        logger.warning(
            "working memory was reset: %s is damaged (%s), so it was moved to %s and an empty working "
            "memory started; long-term memory is intact",
            database,
            error,
            moved.name,
        )
    return _checkpoint_saver(database, thorough), moved


def _read_only_checkpointer(database: Path):
    """The checkpoints of a read-only data directory, for reading (empty if they cannot be read)."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.sqlite import SqliteSaver

    if database.exists():
        try:
            saver = SqliteSaver(open_sqlite_read_only(database, check_same_thread=False))
            saver.is_setup = True  # its setup writes (WAL mode, tables)
            return saver
        except (sqlite3.DatabaseError, StorageError) as error:
            logger.warning("cannot read the working memory in %s (%s); it is empty here", database, error)
    return InMemorySaver()


def postgres_checkpointer(url: str):
    """A PostgreSQL checkpointer (`langgraph-checkpoint-postgres`); creates its tables if needed."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import Connection
    from psycopg.rows import dict_row

    saver = PostgresSaver(Connection.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row))
    saver.setup()
    return saver


def make_checkpointer(ctx: PCMContext, kind: str | None = None):
    """The checkpointer the settings name (`checkpointer`: sqlite or postgres)."""
    kind = kind or ctx.checkpointer
    return postgres_checkpointer(ctx.postgres_url) if kind == "postgres" else sqlite_checkpointer(ctx.data_dir)
