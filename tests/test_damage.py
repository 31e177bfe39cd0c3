"""Damage is detected and repaired, never silent: a deleted or garbled vector index, an empty or
foreign memory file, a damaged checkpoint database, a read-only data directory, a full disk.

Each case is checked through the command line as a user meets it (the exact one-line message,
exit code 2) and on disk (nothing changed that should not have)."""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from typer.testing import CliRunner

import pcm.checkpoints
import pcm.world.chroma
import pcm.world.sqlite_files
import pcm.world.store
from pcm.api import PCM
from pcm.checkpoints import sqlite_checkpointer
from pcm.cli import app
from pcm.models import MemoryNode, NodeType
from pcm.services import Services
from pcm.world.chroma import ChromaConnection, VectorIndexError
from pcm.world.knowledge_graph import user_key
from pcm.world.records import GraphRecords
from pcm.world.storage_errors import StorageError
from pcm.world.vectors import VectorIndex

runner = CliRunner()
FACTS = (
    "I keep bees in my garden in Leeds.",
    "The bees made 12 jars of honey this year.",
    "My sister Ana visits me in Leeds every summer.",
)
QUESTION = "How many jars of honey did the bees make?"


def fact(content: str) -> MemoryNode:
    moment = datetime(2024, 5, 1, 12, tzinfo=timezone.utc)
    return MemoryNode(
        content=content,
        type=NodeType.FACT,
        domain="Personal",
        weight=0.8,
        created_at=moment,
        updated_at=moment,
        last_accessed=moment,
    )


def stored_memory(ctx, user: str = "alice") -> Path:
    """A data directory where `user` has the three FACTS (written the bulk way: no turn, no LLM)."""
    memory = Services(ctx).store.open(user)
    for text in FACTS:
        memory.add_node(fact(text), reason="test", agent="test")
    memory.save()
    memory.records.mark_indexed(memory.key, memory.seq)  # as the next turn records: these vectors are written
    return Path(ctx.data_dir)


def as_a_new_process(data_dir: Path) -> None:
    """Forget this process's Chroma connection to `data_dir`, as a process started now has none."""
    connection = ChromaConnection._shared.pop(("chroma", str(Path(data_dir).resolve())), None)
    if connection is not None:
        with connection.lock:
            connection._drop_system()


def cli(*args: str, data_dir: Path):
    return runner.invoke(app, [*args, "--data-dir", str(data_dir)])


def assert_one_line_error(result, message: str) -> None:
    """The command ended with exit code 2 and this one line (after any progress bar)."""
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == f"error: {message}"
    assert result.stderr.count("error:") == 1 and "Traceback" not in result.output


def stored_rows(data_dir: Path) -> dict:
    with sqlite3.connect(Path(data_dir) / "memory.sqlite") as db:
        return {
            table: db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("pcm_users", "pcm_nodes", "pcm_edges", "pcm_audit", "pcm_messages")
        } | {"seq": db.execute("SELECT COALESCE(MAX(seq), 0) FROM pcm_users").fetchone()[0]}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def found_honey(pcm: PCM) -> bool:
    return any("12 jars of honey" in hit.content for hit in pcm.search(QUESTION, user_id="alice"))


# ---------------------------------------------------------------------- the vector index
def test_a_deleted_vector_index_is_rebuilt_from_the_stored_memories_at_open(ctx, caplog):
    data = stored_memory(ctx)
    as_a_new_process(data)
    shutil.rmtree(data / "chroma")
    pcm = PCM(ctx, checkpointer=InMemorySaver())
    with caplog.at_level(logging.WARNING):
        assert found_honey(pcm)
    assert (
        "the vector index of user 'alice' holds 0 of its 3 memories (deleted, damaged or restored from an older "
        "copy?): rebuilding the missing ones from the stored memories"
    ) in caplog.messages
    assert pcm.memory("alice").vectors.count() == 3


def test_pcm_repair_rebuilds_a_deleted_vector_index(ctx):
    data = stored_memory(ctx)
    as_a_new_process(data)
    shutil.rmtree(data / "chroma")
    result = cli("repair", data_dir=data)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "working memory: ok",
        "'alice': 3 memories, vector index held 0: rebuilt 3, removed 0, now 3",
        f"{data / 'memory.sqlite'}: ok; 1 users: 1 repaired, 0 healthy, 0 not repaired; 3 vectors rebuilt, 0 removed",
    ]
    again = cli("repair", "--user", "alice", data_dir=data)
    assert again.exit_code == 0, again.output
    assert again.stdout.splitlines()[1:] == [
        "'alice': 3 memories, vector index healthy",
        f"{data / 'memory.sqlite'}: ok; 1 users: 0 repaired, 1 healthy, 0 not repaired; 0 vectors rebuilt, 0 removed",
    ]
    assert found_honey(PCM(ctx, checkpointer=InMemorySaver()))
    assert_one_line_error(cli("repair", "--user", "bob", data_dir=data), f"no memory for user 'bob' in {data}")


def test_an_index_missing_more_than_opening_rebuilds_refuses_naming_pcm_repair(ctx, monkeypatch):
    data = stored_memory(ctx)
    as_a_new_process(data)
    shutil.rmtree(data / "chroma")
    monkeypatch.setattr(pcm.world.store, "AUTO_REINDEX_LIMIT", 2)  # 3 memories are missing
    assert_one_line_error(
        cli("memory", "list", "--user", "alice", data_dir=data),
        "the vector index of user 'alice' holds 0 of its 3 memories (deleted, damaged or restored "
        f"from an older copy?); run `pcm repair --data-dir {data}` to rebuild it from the stored "
        "memories",
    )
    repaired = cli("repair", data_dir=data)
    assert repaired.exit_code == 0 and "vector index held 0: rebuilt 3, removed 0, now 3" in repaired.stdout
    assert cli("memory", "list", "--user", "alice", data_dir=data).exit_code == 0


def test_a_garbled_vector_index_is_moved_aside_and_rebuilt(ctx, caplog):
    data = stored_memory(ctx)
    as_a_new_process(data)
    database = data / "chroma" / "chroma.sqlite3"
    garbled = b"\xa5" * 100 + database.read_bytes()[100:]  # its header: "file is not a database"
    database.write_bytes(garbled)
    with caplog.at_level(logging.WARNING):
        listed = cli("memory", "list", "--user", "alice", data_dir=data)
        assert listed.exit_code == 0 and "honey" in listed.stdout
        assert found_honey(PCM(ctx, checkpointer=InMemorySaver()))
    [moved] = data.glob("chroma.damaged-*")
    assert (moved / "chroma.sqlite3").read_bytes() == garbled
    assert (
        f"the vector index {data / 'chroma'} is damaged (error returned from database: (code: 26) file is not a "
        f"database): moved it to {moved}; a new one is rebuilt from the stored memories (each user's when it is "
        "opened, or all of them by `pcm repair`)"
    ) in caplog.messages


class PanicException(BaseException):
    """Stands for pyo3's PanicException (a BaseException), which Chroma raises on some damage."""


def test_a_chroma_panic_at_open_is_recovered_and_later_one_is_a_one_line_error(ctx, monkeypatch, caplog):
    data = stored_memory(ctx)
    as_a_new_process(data)
    opening = pcm.world.chroma.chroma_client
    calls = []

    def panicking_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise PanicException("Expect it to be fetched: Database(SqliteError { code: 11 })")
        return opening(*args, **kwargs)

    monkeypatch.setattr(pcm.world.chroma, "chroma_client", panicking_once)
    with caplog.at_level(logging.WARNING):
        assert found_honey(PCM(ctx, checkpointer=InMemorySaver()))
    assert len(list(data.glob("chroma.damaged-*"))) == 1
    assert any("is damaged (Expect it to be fetched" in m for m in caplog.messages)

    index = VectorIndex(ChromaConnection.shared("chroma", str(data)), user_key("alice"))

    class Panicking:
        def count(self):
            raise PanicException("called `Result::unwrap()` on an `Err` value")

    monkeypatch.setattr(index, "_collections", lambda: (Panicking(), Panicking()))
    with pytest.raises(VectorIndexError) as raised:
        index.count()
    assert str(raised.value) == (
        f"the vector index {data / 'chroma' / 'chroma.sqlite3'} cannot be used (called "
        f"`Result::unwrap()` on an `Err` value); run `pcm repair --data-dir {data}` to "
        "rebuild it from the stored memories"
    )


# ---------------------------------------------------------------------- the memory file
def test_an_empty_memory_file_is_an_error_not_a_new_store(ctx):
    data = Path(ctx.data_dir)
    data.mkdir(parents=True)
    memory_file = data / "memory.sqlite"
    memory_file.write_bytes(b"")
    result = cli("memory", "list", "--user", "alice", data_dir=data)
    assert_one_line_error(
        result,
        f"{memory_file} is empty (0 bytes), not a PCM memory: restore it from a backup, or "
        "delete it to start a new, empty memory",
    )
    assert memory_file.read_bytes() == b""
    with pytest.raises(StorageError, match="is empty"):
        GraphRecords("sqlite", data)
    memory_file.unlink()  # a missing file is a new store
    assert_one_line_error(
        cli("memory", "list", "--user", "alice", data_dir=data), f"no memory for user 'alice' in {data}"
    )


@pytest.mark.parametrize("kind", ["another SQLite database", "not a database"])
def test_a_foreign_memory_file_is_an_error_and_left_as_it_is(ctx, kind):
    data = Path(ctx.data_dir)
    data.mkdir(parents=True)
    memory_file = data / "memory.sqlite"
    if kind == "not a database":
        memory_file.write_text("name,amount\nrent,1200\n" * 300)
        message = (
            f"{memory_file} is not a SQLite database (it is damaged, or another kind of file): restore it from "
            "a backup, or move it away to start a new, empty memory"
        )
    else:
        with sqlite3.connect(memory_file) as db:
            db.execute("CREATE TABLE invoices (number INTEGER, amount REAL)")
            db.execute("INSERT INTO invoices VALUES (1, 12.5)")
        message = (
            f"{memory_file} is a SQLite database of something else (tables: invoices), not a PCM memory: use "
            "another data directory, or move the file away"
        )
    before = digest(memory_file)
    assert_one_line_error(cli("memory", "list", "--user", "alice", data_dir=data), message)
    assert_one_line_error(cli("repair", data_dir=data), message)
    assert digest(memory_file) == before


def test_pcm_repair_reports_a_damaged_memory_file_and_changes_nothing(ctx):
    data = stored_memory(ctx)
    as_a_new_process(data)
    memory_file = data / "memory.sqlite"
    with sqlite3.connect(memory_file) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
    content = bytearray(memory_file.read_bytes())
    content[-page_size:] = b"\x0d" + b"\xff" * (page_size - 1)  # the last page: garbage
    memory_file.write_bytes(bytes(content))
    result = cli("repair", data_dir=data)
    assert result.exit_code == 2, result.output
    line = result.stderr.splitlines()[-1]
    assert line.startswith(f"error: {memory_file} is damaged (")
    assert line.endswith("); it holds the long-term memory, which nothing else can rebuild: restore it from a backup")
    assert memory_file.read_bytes() == bytes(content)


# ---------------------------------------------------------------------- working memory
def test_a_damaged_checkpoint_database_resets_working_memory_only(ctx, caplog):
    data = stored_memory(ctx)
    saver = sqlite_checkpointer(data)
    with saver.conn:
        saver.conn.executemany(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint) VALUES (?, '', ?, ?)",
            [("t", str(n), os.urandom(3000)) for n in range(100)],
        )
    saver.conn.close()
    checkpoints = data / "checkpoints.sqlite"
    truncated = checkpoints.read_bytes()[: checkpoints.stat().st_size // 2]
    checkpoints.write_bytes(truncated)
    with caplog.at_level(logging.WARNING):
        pcm = PCM(ctx)  # the SQLite checkpointer of the settings
    [moved] = data.glob("checkpoints.sqlite.damaged-*")
    assert moved.read_bytes() == truncated
    assert (
        f"working memory was reset: {checkpoints} is damaged (database disk image is malformed), so it was moved "
        f"to {moved.name} and an empty working memory started; long-term memory is intact"
    ) in caplog.messages
    assert found_honey(pcm) and pcm.state("alice") == {}
    assert cli("memory", "list", "--user", "alice", data_dir=data).exit_code == 0


# ---------------------------------------------------------------------- read-only directory, full disk
def read_only_message(data: Path) -> str:
    return (
        f"{data} is read-only: nothing can be stored there; make it writable (e.g. chmod -R u+w {data}) or use "
        "another data directory"
    )


def conversation(tmp_path: Path) -> Path:
    path = tmp_path / "chat.json"
    path.write_text('[{"role": "user", "content": "I moved to Porto and I now work as a chemist there."}]')
    return path


def test_a_read_only_data_directory_can_be_read_and_refuses_writes_in_one_line(ctx, monkeypatch, tmp_path):
    """Simulated: tests may run as root, whom `chmod -R a-w` does not stop, so PCM is told it
    cannot write the folder (its `writable` check answers False). SQLite then opens the files
    read-only for real, and a write fails in SQLite as it does in a read-only folder
    ("attempt to write a readonly database"). `test_a_truly_read_only_data_directory` runs the
    same commands where the folder really is read-only."""
    data = stored_memory(ctx)
    as_a_new_process(data)
    sqlite_checkpointer(data).conn.close()
    rows = stored_rows(data)
    monkeypatch.setattr(pcm.world.sqlite_files, "writable", lambda *paths: False)
    monkeypatch.setattr(pcm.checkpoints, "writable", lambda *paths: False)
    listed = cli("memory", "list", "--user", "alice", data_dir=data)
    assert listed.exit_code == 0 and "honey" in listed.stdout
    exported = cli("memory", "export", "--user", "alice", data_dir=data)
    assert exported.exit_code == 0 and "12 jars of honey" in exported.stdout
    node_id = next(n.id for n in Services(ctx).store.open("alice").nodes() if "honey" in n.content)
    shown = cli("memory", "show", node_id, "--user", "alice", data_dir=data)
    assert shown.exit_code == 0 and "honey" in shown.stdout
    assert_one_line_error(
        cli("ingest", str(conversation(tmp_path)), "--user", "alice", data_dir=data), read_only_message(data)
    )
    assert_one_line_error(
        cli("repair", data_dir=data),
        f"{data} is read-only: `pcm repair` has to write there; make it writable (e.g. chmod -R "
        f"u+w {data}) and run it again",
    )
    assert stored_rows(data) == rows


DROP_WRITE_PERMISSION = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner"]


@pytest.mark.slow
def test_a_truly_read_only_data_directory(ctx, tmp_path):
    """`chmod -R a-w` on the data directory; as root, the commands run without the capability
    that lets root write anyway (setpriv), so the folder is read-only to them as to anyone."""
    data = stored_memory(ctx)
    sqlite_checkpointer(data).conn.close()
    rows = stored_rows(data)
    prefix = []
    if os.geteuid() == 0:
        probe = tmp_path / "probe"
        probe.mkdir()
        probe.chmod(0o555)
        if (
            not shutil.which("setpriv")
            or subprocess.run([*DROP_WRITE_PERMISSION, "touch", str(probe / "x")], capture_output=True).returncode == 0
        ):
            pytest.skip("running as root, and root's permission to write anyway cannot be dropped here")
        prefix = DROP_WRITE_PERMISSION
    subprocess.run(["chmod", "-R", "a-w", str(data)], check=True)
    try:

        def pcm_command(*args):
            return subprocess.run(
                [*prefix, sys.executable, "-m", "pcm.cli", *args, "--data-dir", str(data)],
                capture_output=True,
                text=True,
                timeout=300,
                env=os.environ | {"OMP_NUM_THREADS": "1"},
            )

        listed = pcm_command("memory", "list", "--user", "alice")
        assert listed.returncode == 0 and "honey" in listed.stdout, listed.stderr
        exported = pcm_command("memory", "export", "--user", "alice")
        assert exported.returncode == 0 and "12 jars of honey" in exported.stdout, exported.stderr
        ingested = pcm_command("ingest", str(conversation(tmp_path)), "--user", "alice")
        assert ingested.returncode == 2, ingested.stderr
        assert ingested.stderr.splitlines()[-1] == f"error: {read_only_message(data)}"
        assert "Traceback" not in ingested.stderr
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(data)], check=True)
    assert stored_rows(data) == rows


def disk_full_message(data: Path) -> str:
    return f"no space left on the disk holding {data}: free some space there, then run the command again"


def test_a_full_disk_stops_ingest_with_one_line_and_stores_nothing(ctx, monkeypatch, tmp_path):
    """Simulated: the graph store's writes fail as SQLite fails on a full disk ("database or disk
    is full", inside the transaction). `test_a_full_disk_for_real` fills a small tmpfs where the
    test process may mount one."""
    data = stored_memory(ctx)
    as_a_new_process(data)
    rows = stored_rows(data)
    statement = GraphRecords._sql

    def full(self, text):
        if text.startswith(("INSERT", "UPDATE")):
            raise sqlite3.OperationalError("database or disk is full")
        return statement(self, text)

    monkeypatch.setattr(GraphRecords, "_sql", full)
    assert_one_line_error(
        cli("ingest", str(conversation(tmp_path)), "--user", "alice", data_dir=data), disk_full_message(data)
    )
    monkeypatch.undo()
    assert stored_rows(data) == rows


@pytest.mark.slow
def test_a_full_disk_for_real(tmp_path, monkeypatch):
    """On a 16 MB tmpfs filled to the last byte (skipped where the test process cannot mount)."""
    mount = tmp_path / "small-disk"
    mount.mkdir()
    if (
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], capture_output=True).returncode
        != 0
    ):
        pytest.skip("this test process cannot mount a tmpfs")
    try:
        for name in list(os.environ):
            if name.startswith("PCM_"):
                monkeypatch.delenv(name)
        from pcm.config import load_context

        data = stored_memory(load_context(data_dir=str(mount / "data")))
        sqlite_checkpointer(data).conn.close()
        rows = stored_rows(data)
        with open(mount / "filler", "wb", buffering=0) as filler:
            try:
                while True:
                    filler.write(b"\0" * 65536)
                    filler.flush()
            except OSError:
                pass
        result = cli("ingest", str(conversation(tmp_path)), "--user", "alice", data_dir=data)
        assert_one_line_error(result, disk_full_message(data))
        (mount / "filler").unlink()
        assert stored_rows(data) == rows
    finally:
        as_a_new_process(mount / "data")
        subprocess.run(["umount", "-l", str(mount)], check=False)
