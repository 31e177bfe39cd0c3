"""`pcm repair`: check the stored memory and rebuild what can be rebuilt (`pcm.repair`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from pcm.cli.common import ConfigFile, DataDir, app, console, context_for, quiet_logs, user_errors


@app.command()
@user_errors
def repair(
    data_dir: Optional[Path] = DataDir,
    user: Optional[str] = typer.Option(None, "--user", help="only this user (default: every user)"),
    config: Optional[Path] = ConfigFile,
) -> None:
    """Check the stored memory and rebuild the vector index (and a damaged working memory) from it.

    memory.sqlite is checked page by page; each user's vector index is compared with their
    memories and rebuilt where it lacks any; an index or working memory that cannot be read is
    moved aside (*.damaged-<time>) and started anew. Exit code 2 if anything could not be repaired.
    """
    from pcm.checkpoints import open_checkpoints
    from pcm.repair import repair_store
    from pcm.services import Services
    from pcm.world.storage_errors import StorageError

    quiet_logs()
    ctx = context_for(config, data_dir)
    store = Services(ctx).store
    report = repair_store(store, [user] if user else None)
    if report.store_problems:
        raise StorageError(
            f"{store.records.path or 'the graph store'} is damaged ({report.store_problems[0]}); it "
            "holds the long-term memory, which nothing else can rebuild: restore it from a backup"
        )
    if ctx.checkpointer == "sqlite":
        saver, moved = open_checkpoints(ctx.data_dir, thorough=True)
        saver.conn.close()
        console.print(
            f"working memory: damaged, moved to {moved}; it starts empty" if moved else "working memory: ok",
            highlight=False,
        )
    for moved, reason in report.index_set_aside:
        others = "; other users' vectors are rebuilt when they are next opened" if user else ""
        console.print(
            f"vector index: damaged ({reason}), moved to {moved}; a new one was built{others}", highlight=False
        )
    for found in report.users:
        console.print(found.line(), highlight=False)
    console.print(f"{store.records.path or 'graph store'}: ok; {report.total()}", highlight=False)
    if not report.repaired:
        failed = ", ".join(repr(u.user_id) for u in report.users if u.error)
        raise StorageError(
            f"the vector index of {failed} could not be repaired (see above); the stored memories are "
            "intact, but search may miss some of them until `pcm repair` succeeds"
        )
