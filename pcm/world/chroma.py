"""The process's Chroma: its client (embedded, or a server), kept fresh across processes, and
recovered when its database is damaged.

Embeddings are always computed by PCM (never by Chroma), and telemetry is off. A failure of
the index is a `VectorIndexError` (one line, naming `pcm repair`); `index_failure` tells it
from a full disk, a read-only folder or a bug of the caller's.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from contextlib import closing, nullcontext
from pathlib import Path
from urllib.parse import urlparse

from pcm.world.sqlite_files import move_aside
from pcm.world.storage_errors import StorageError, is_damaged, storage_error

logger = logging.getLogger(__name__)


class VectorIndexError(StorageError):
    """The vector index cannot be used (its Chroma database is damaged); `pcm repair` rebuilds it
    from the graph store. `damage`: what shows the database is damaged, when something does."""

    damage: str | None = None


class IncompleteIndexError(VectorIndexError):
    """The vector index lacks more of a user's memories than opening rebuilds by itself."""


def is_panic(error: BaseException) -> bool:
    """Whether `error` is a Rust panic surfacing from Chroma (pyo3's PanicException, which derives
    from BaseException, not Exception, and cannot be imported by name)."""
    return type(error).__name__ == "PanicException"


def index_failure(error: BaseException) -> bool:
    """Whether `error` is the vector index failing (not a full disk, a read-only folder, or a bug
    of the caller's): a `VectorIndexError`, a panic of Chroma, or an error Chroma raised."""
    return (
        isinstance(error, VectorIndexError)
        or is_panic(error)
        or not isinstance(error, StorageError)
        and type(error).__module__.startswith("chromadb")
    )


def first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:200]


def chroma_damage(folder: Path, error: BaseException) -> str | None:
    """Why the Chroma database in `folder` is damaged, judged after Chroma failed with `error`,
    or None if nothing says it is (the failure was something else). A panic, or SQLite saying
    the file is malformed or not a database, is damage; otherwise SQLite checks the file."""
    if is_panic(error) or is_damaged(error):
        return first_line(error)
    database = folder / "chroma.sqlite3"
    if not database.exists():
        return None
    try:
        with closing(sqlite3.connect(f"{database.absolute().as_uri()}?mode=ro", uri=True)) as connection:
            found = connection.execute("PRAGMA quick_check(1)").fetchone()[0]
    except sqlite3.DatabaseError as check_error:
        return str(check_error) if is_damaged(check_error) else None
    return None if found == "ok" else " ".join(found.split())  # its report spans lines


def index_chroma_log(folder: str | Path) -> None:
    """Index the write-ahead log of the Chroma database in `folder` by collection.

    Chroma keeps a collection's log rows until that collection's HNSW index is next persisted
    (every `sync_threshold` = 1,000 vectors), so with many users most rows stay, and it finds
    a collection's rows with `topic = ? AND seq_id > ?` on a table indexed by `seq_id` only:
    every write scanned the log. With 1,000 users of 200 memories (a log of 500k rows) an
    upsert took 0.22-0.32 s; with this index it takes 0.01-0.015 s (same database). The
    index is ours, not part of Chroma's schema; creating it again is a no-op.
    """
    database = Path(folder) / "chroma.sqlite3"
    if not database.exists():
        return
    with closing(sqlite3.connect(database, timeout=60)) as connection:
        connection.execute("CREATE INDEX IF NOT EXISTS pcm_embeddings_queue_topic ON embeddings_queue (topic, seq_id)")
        connection.commit()


def start_embedded_chroma(settings, cached_indexes: int) -> None:
    """Start the process's embedded Chroma system for `settings` (unless running) keeping at
    most `cached_indexes` collection indexes in memory; `chromadb.PersistentClient` with the
    same settings then uses it.

    Embedded Chroma caches every collection index it has opened, up to a fifth of the
    process's open-file limit (4,000 here), with no setting for it: a process serving 1,000
    users held 2,000 indexes and reached 4.4 GB although PCM's own LRU kept 64 users open.
    The bound is set on Chroma's API object between its creation and its start, the one
    moment it is read. An evicted index is reloaded from disk (and the log) when used again.
    """
    from chromadb.api import ServerAPI
    from chromadb.api.shared_system_client import SharedSystemClient
    from chromadb.config import System
    from chromadb.telemetry.product import ProductTelemetryClient

    identifier = settings.persist_directory
    if identifier in SharedSystemClient._identifier_to_system:
        return
    system = System(settings)
    system.instance(ProductTelemetryClient)
    api = system.instance(ServerAPI)
    api.hnsw_cache_size = min(api.hnsw_cache_size, cached_indexes)
    system.start()
    SharedSystemClient._identifier_to_system[identifier] = system


def chroma_client(kind: str, data_dir: str, url: str = "", cached_indexes: int = 0):
    """An embedded Chroma under `data_dir/chroma` ("chroma"), or a Chroma server ("chroma-server").
    `cached_indexes` > 0 bounds how many collections' indexes embedded Chroma keeps in memory."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    if kind == "chroma":
        settings = Settings(
            anonymized_telemetry=False, allow_reset=False, is_persistent=True, persist_directory=f"{data_dir}/chroma"
        )
        from filelock import FileLock

        # two processes opening a fresh folder at once both run Chroma's schema migrations, and
        # one fails ("table collections already exists"): the writers' lock serialises the opening
        Path(data_dir, "chroma").mkdir(parents=True, exist_ok=True)
        with FileLock(str(Path(data_dir) / "chroma" / "writer.lock")):
            if cached_indexes > 0:
                start_embedded_chroma(settings, cached_indexes)
            client = chromadb.PersistentClient(path=f"{data_dir}/chroma", settings=settings)
            index_chroma_log(Path(data_dir) / "chroma")
            return client
    if kind == "chroma-server":
        if not url:
            raise ValueError("vector_store 'chroma-server' needs chroma_url (e.g. http://127.0.0.1:8000)")
        parsed = urlparse(url)
        return chromadb.HttpClient(
            host=parsed.hostname or "127.0.0.1",
            port=parsed.port or 8000,
            ssl=parsed.scheme == "https",
            settings=settings,
        )
    raise ValueError(f"vector_store must be 'chroma' or 'chroma-server', not {kind!r}")


class ChromaConnection:
    """The process's one Chroma client for a data directory (or server).

    Embedded Chroma is not process-safe: a process keeps each collection's index in memory and
    does not see what another process wrote to it since (its queries miss those vectors, and a
    `get` can fail with "Error finding id"). So before a user's collections are used, the
    connection is told the user's commit sequence number (`ensure_fresh`); if another process
    committed to that user since this process last used its collections, the cached Chroma
    system is dropped and the client made again (about 40 ms), and embedded writes from
    different processes are serialised by a file lock. A Chroma server needs none of this.

    Embedded Chroma is opened on first use, not when the connection is made: reading a memory
    needs no vectors, and so works where Chroma cannot open (a read-only data directory). If it
    cannot open because its database is damaged (SQLite says so, or Chroma panics), the folder is
    moved aside (`chroma.damaged-<time>`) and a new, empty index made, with a warning: this is
    the first use in the process, so no open memory relies on the old index yet, and each
    memory's vectors are rebuilt from the graph store when it is opened
    (`WeightedKnowledgeGraph.check_index`). A failure that is not plainly damage, or damage found
    later, raises `VectorIndexError`, which names `pcm repair`.
    """

    _shared: dict[tuple[str, str], "ChromaConnection"] = {}
    _shared_lock = threading.Lock()

    def __init__(self, kind: str, data_dir: str, url: str = "", cached_indexes: int = 0):
        self.kind, self.data_dir, self.url = kind, data_dir, url
        self.cached_indexes = cached_indexes
        self.embedded = kind == "chroma"
        self.lock = threading.RLock()
        self.generation = 0
        #: damaged index folders this connection moved aside (where to, and why)
        self.set_aside: list[tuple[Path, str]] = []
        #: the users whose index answered a call in this process (see `recover`)
        self.served: set[str] = set()
        self._client = None if self.embedded else chroma_client(kind, data_dir, url, cached_indexes)
        self._known: dict[str, int] = {}
        self._write_lock = None
        if self.embedded:
            from filelock import FileLock

            self._write_lock = FileLock(str(Path(data_dir) / "chroma" / "writer.lock"), thread_local=False)

    @property
    def folder(self) -> Path:
        """The embedded index's folder."""
        return Path(self.data_dir) / "chroma"

    @property
    def client(self):
        """The Chroma client, made on first use (recovering a damaged index while no memory
        relies on it yet)."""
        client = self._client
        if client is None:
            with self.lock:
                if self._client is None:
                    self._client = self._open_client(recover=not self.served)
                client = self._client
        return client

    def _open_client(self, recover: bool):
        """A new embedded client; a damaged database is moved aside first when `recover`."""
        try:
            return chroma_client(self.kind, self.data_dir, self.url, self.cached_indexes)
        except BaseException as error:
            if not (
                is_panic(error)
                or isinstance(error, sqlite3.Error)
                or isinstance(error, OSError)
                or type(error).__module__.startswith("chromadb")
            ):
                raise
            self._drop_system()
            translated = storage_error(error, self.folder, folder=self.data_dir)
            if translated is not None:
                raise translated from None
            damage = chroma_damage(self.folder, error)
            if damage is None or not recover:
                raise self.damaged(error) from None
            self._move_aside(damage)
        return chroma_client(self.kind, self.data_dir, self.url, self.cached_indexes)

    def damaged(self, error: BaseException, damage: str | None = None) -> VectorIndexError:
        """The error that tells a user the index cannot be used, and what to run."""
        failure = VectorIndexError(
            f"the vector index {self.folder / 'chroma.sqlite3'} cannot be used "
            f"({first_line(error)}); run `pcm repair --data-dir {self.data_dir}` to rebuild "
            "it from the stored memories"
        )
        failure.damage = damage
        return failure

    def recover(self, error: BaseException, key: str) -> bool:
        """After the index failed while the memory of `key` was being opened: if this process has
        used the index for no other memory and its database is plainly damaged, move it aside and
        start an empty one (True); the memory then rebuilds its vectors. Once the index has served
        another memory, that one would be left relying on the old index, so then nothing is done."""
        if not self.embedded or self.served - {key}:
            return False
        damage = getattr(error, "damage", None) or chroma_damage(self.folder, error)
        if damage is None:
            return False
        self.start_afresh(damage)
        return True

    def _move_aside(self, reason: str) -> Path:
        from filelock import FileLock

        with FileLock(str(self.folder / "writer.lock")):
            moved = move_aside(self.folder)
        self.set_aside.append((moved, reason))
        logger.warning(
            "the vector index %s is damaged (%s): moved it to %s; a new one is rebuilt from the stored "
            "memories (each user's when it is opened, or all of them by `pcm repair`)",
            self.folder,
            reason,
            moved,
        )
        return moved

    def start_afresh(self, reason: str) -> Path | None:
        """Move the embedded index aside (when it exists) and start an empty one, opened on next
        use: for `recover` and `pcm repair`. Every user's vectors must then be rebuilt."""
        with self.lock:
            self._drop_system()
            self._client = None
            moved = self._move_aside(reason) if self.folder.exists() else None
            self.generation += 1
            self._known.clear()
            return moved

    def _drop_system(self) -> None:
        """Stop and forget this process's embedded Chroma system for the folder (if any)."""
        from chromadb.api.shared_system_client import SharedSystemClient

        identifier = self._client._identifier if self._client is not None else f"{self.data_dir}/chroma"
        with SharedSystemClient._refcount_lock:
            SharedSystemClient._identifier_to_refcount.pop(identifier, None)
            system = SharedSystemClient._identifier_to_system.pop(identifier, None)
        if system is not None:
            try:
                system.stop()
            except Exception:  # a system that failed to start may not stop cleanly either
                logger.debug("stopping the Chroma system of %s failed", identifier, exc_info=True)

    @classmethod
    def shared(cls, kind: str, data_dir: str, url: str = "", cached_indexes: int = 0) -> "ChromaConnection":
        """The process's connection to that Chroma (the first caller's `cached_indexes` holds)."""
        where = (kind, str(Path(data_dir).resolve()) if kind == "chroma" else url)
        with cls._shared_lock:
            if where not in cls._shared:
                cls._shared[where] = cls(kind, data_dir, url, cached_indexes)
            return cls._shared[where]

    def ensure_fresh(self, key: str, seq: int) -> None:
        """Before using `key`'s collections at commit `seq`: drop a stale embedded cache."""
        if not self.embedded:
            return
        with self.lock:
            if self._known.get(key, seq) != seq:
                self._reset()
            self._known[key] = seq

    def advance(self, key: str, seq: int) -> None:
        """This process wrote commit `seq` of `key` itself: its cache is current."""
        if self.embedded:
            with self.lock:
                self._known[key] = seq

    def restart(self, generation: int) -> None:
        """Make the client again unless another thread already did since `generation`."""
        with self.lock:
            if self.generation == generation:
                self._reset()

    def _reset(self) -> None:
        if self._client is None:  # not opened yet: it opens fresh on first use
            return
        self._drop_system()
        self._client = None
        self._client = self._open_client(recover=False)
        self.generation += 1
        self._known.clear()
        logger.info("reloaded the embedded Chroma of %s", self.data_dir)

    def writing(self):
        """Hold while writing: serialises embedded writes across processes."""
        return self._write_lock if self._write_lock is not None else nullcontext()
