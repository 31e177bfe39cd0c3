"""`pcm repair`: check a data directory and rebuild what can be rebuilt from the stored memories.

The graph store (memory.sqlite, or PostgreSQL) is the record of long-term memory. The vector
index (Chroma) is derived from it and the checkpoints hold only working memory (recent turns
not yet consolidated), so both can be rebuilt or restarted without losing long-term memory.
A damaged graph store cannot be repaired from anything here: it is reported, and nothing is
changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pcm.world.chroma import first_line, index_failure
from pcm.world.knowledge_graph import user_key
from pcm.world.storage_errors import StorageError
from pcm.world.store import MemoryStore
from pcm.world.vectors import VectorIndex


@dataclass
class UserRepair:
    """What the repair found and did for one user's vector index."""

    user_id: str
    memories: int = 0  # memories retrieved by similarity, in the graph store
    indexed_before: int | None = None  # entries of the index before (None: it could not be read)
    indexed_after: int = 0
    added: int = 0
    removed: int = 0
    error: str = ""

    @property
    def healthy(self) -> bool:
        return not self.error and not self.added and not self.removed and self.indexed_before == self.memories

    def line(self) -> str:
        if self.error:
            return f"{self.user_id!r}: NOT repaired: {self.error}"
        if self.healthy:
            return f"{self.user_id!r}: {self.memories} memories, vector index healthy"
        before = "could not be read" if self.indexed_before is None else f"held {self.indexed_before}"
        return (
            f"{self.user_id!r}: {self.memories} memories, vector index {before}: rebuilt {self.added}, "
            f"removed {self.removed}, now {self.indexed_after}"
        )


@dataclass
class RepairReport:
    store_problems: list[str] = field(default_factory=list)  # what the graph store's integrity check found
    index_set_aside: list[tuple[Path, str]] = field(default_factory=list)  # damaged index folders moved, and why
    users: list[UserRepair] = field(default_factory=list)

    @property
    def repaired(self) -> bool:
        """Everything is sound now (or was)."""
        return not self.store_problems and not any(u.error for u in self.users)

    def total(self) -> str:
        failed = sum(1 for u in self.users if u.error)
        healthy = sum(1 for u in self.users if u.healthy)
        return (
            f"{len(self.users)} users: {len(self.users) - failed - healthy} repaired, {healthy} healthy, "
            f"{failed} not repaired; {sum(u.added for u in self.users)} vectors rebuilt, "
            f"{sum(u.removed for u in self.users)} removed"
        )


def repair_store(store: MemoryStore, users: list[str] | None = None) -> RepairReport:
    """Check the graph store (`PRAGMA quick_check`), then make each user's vector index (of
    `users`, default all) hold exactly their memories, rebuilding what it lacks from the graph
    store. An index that cannot be read at all is moved aside and rebuilt whole."""
    if store.records.read_only:
        raise StorageError(
            f"{store.data_dir} is read-only: `pcm repair` has to write there; make it writable (e.g. "
            f"chmod -R u+w {store.data_dir}) and run it again"
        )
    report = RepairReport(store_problems=store.records.integrity_problems())
    if report.store_problems:  # rebuilding from a damaged record would spread the damage
        return report
    for user_id in users or []:
        if not store.exists(user_id):
            raise LookupError(f"no memory for user {user_id!r} in {store.data_dir}")
    wanted = users or store.users()
    store.reindex_limit = None  # opening rebuilds every missing vector, however many
    counts = _index_counts(store, wanted)
    started_afresh, before = counts is None, counts or {}
    while True:
        report.users = []
        last_try = started_afresh or not store.chroma.embedded
        try:
            for user_id in wanted:
                report.users.append(_repair_user(store, user_id, before.get(user_id), last_try))
            break
        except Exception as error:  # the index failed: once, start it afresh and rebuild every user
            if started_afresh or not store.chroma.embedded or not index_failure(error):
                raise
            store.chroma.start_afresh(first_line(error))
            started_afresh, before = True, {}
    report.index_set_aside = list(store.chroma.set_aside)
    return report


def _repair_user(store: MemoryStore, user_id: str, before: int | None, last_try: bool) -> UserRepair:
    """Rebuild one user's index; an index failure is raised (to start the index afresh) unless
    this is the `last_try`, when it is reported."""
    found = UserRepair(user_id, indexed_before=before)
    try:
        memory = store.open(user_id, create=False)
        found.memories = memory.retrievable_count()
        found.removed, added = memory.reconcile_index()
        found.added = memory.reindexed_at_open + added
        memory.reindexed_at_open = 0
        found.indexed_after = memory.vectors.count()
    except Exception as error:
        if index_failure(error) and not last_try:
            raise
        found.error = first_line(error)
        return found
    if found.indexed_after != found.memories:
        found.error = f"the vector index holds {found.indexed_after} entries for {found.memories} memories"
    return found


def _index_counts(store: MemoryStore, users: list[str]) -> dict[str, int] | None:
    """Each user's number of index entries; if the embedded index cannot be read, it is moved
    aside and a new one started (then None: every user's vectors are rebuilt)."""
    try:
        return {user_id: VectorIndex(store.chroma, user_key(user_id)).count() for user_id in users}
    except Exception as error:
        if not store.chroma.embedded or not index_failure(error):
            raise
        store.chroma.start_afresh(first_line(error))
        return None
