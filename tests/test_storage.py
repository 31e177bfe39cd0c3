"""Storage: incremental lexical index, atomic turns, LRU, as-of queries, migration, idempotent
ingestion, crash safety under kill -9, concurrent writers, and real PostgreSQL and Chroma servers."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import bm25s
import networkx as nx
import numpy as np
import pytest
from langgraph.checkpoint.memory import InMemorySaver

import pcm.nodes.memory as memory_nodes
import pcm.world.memory_words as memory_words
from pcm.api import PCM
from pcm.graph import build_graph
from pcm.ingest import ingest_turns, read_conversation
from pcm.models import RETRIEVABLE_TYPES, MemoryChange, MemoryEdge, MemoryNode, NodeType
from pcm.services import Services
from pcm.world.knowledge_graph import user_key
from pcm.world.lexical import LexicalIndex
from pcm.world.persistence import NODE_LINK
from pcm.world.user_locks import MemoryBusyError

WORKER = Path(__file__).with_name("storage_worker.py")
CITIES = ["Oslo", "Lima", "Kyoto", "Porto", "Dakar", "Quito", "Hanoi", "Tunis", "Riga", "Perth", "Cusco", "Turin"]
PEOPLE = ["my sister", "Marco", "my neighbour Ines", "an old colleague", "Dr. Okafor", "the twins"]
TOPICS = ["pottery", "chess openings", "sourdough", "Rust lifetimes", "birdwatching", "tax forms", "jazz"]


def conversation(count: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    return [
        {
            "role": "user",
            "content": f"Day {i}: I went to {rng.choice(CITIES)} with {rng.choice(PEOPLE)} "
            f"and we talked about {rng.choice(TOPICS)} for {rng.randint(2, 90)} minutes.",
            "timestamp": f"2024-03-{1 + i // 10:02d}T{8 + i % 10:02d}:00:00+00:00",
        }
        for i in range(count)
    ]


def fact(content, weight=0.8, moment=None, node_type=NodeType.FACT, **extra):
    moment = moment or datetime(2024, 5, 1, 12, tzinfo=timezone.utc)
    return MemoryNode(
        content=content,
        type=node_type,
        domain="Personal",
        weight=weight,
        created_at=moment,
        updated_at=moment,
        last_accessed=moment,
        **extra,
    )


def stored_rows(data_dir) -> dict:
    """Row counts and sequence numbers straight from the SQLite file."""
    with sqlite3.connect(Path(data_dir) / "memory.sqlite") as db:
        return {
            table: db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("pcm_nodes", "pcm_edges", "pcm_audit", "pcm_messages")
        } | {"seq": db.execute("SELECT COALESCE(MAX(seq), 0) FROM pcm_users").fetchone()[0]}


# ---------------------------------------------------------------------- lexical index
def test_incremental_lexical_index_scores_exactly_like_bm25s():
    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(200)]
    docs = [[rng.choice(vocab[: rng.randint(3, 200)]) for _ in range(rng.randint(1, 25))] for _ in range(600)]
    index = LexicalIndex()
    for number, words in enumerate(docs):
        index.add(f"d{number}", words)
    reference = bm25s.BM25()
    reference.index(docs, show_progress=False)
    for _ in range(50):
        query = [rng.choice(vocab) for _ in range(rng.randint(1, 5))]
        known = [t for t in query if t in reference.vocab_dict]
        if known:
            assert np.array_equal(reference.get_scores(known), index.scores(known))
    loaded = LexicalIndex()  # reopening: many documents at once, then the usual one at a time
    loaded.extend([(f"d{number}", words) for number, words in enumerate(docs[:400])] + [("empty", [])])
    for number, words in enumerate(docs[400:], start=400):
        loaded.add(f"d{number}", words)
    assert loaded.ids == index.ids and loaded._postings == index._postings and loaded._lengths == index._lengths
    index.remove_last("d599", docs[599])
    shorter = bm25s.BM25()
    shorter.index(docs[:599], show_progress=False)
    assert np.array_equal(shorter.get_scores(["w1", "w7"]), index.scores(["w1", "w7"]))
    assert index.document_frequency("w1") == sum("w1" in set(d) for d in docs[:599])


# ---------------------------------------------------------------------- atomic turns
def _snapshot(pcm: PCM, user: str) -> dict:
    memory = pcm.memory(user)
    return {
        "memory": memory.export(),
        "vectors": sorted(memory.vectors.ids()),
        "rows": stored_rows(pcm.ctx.data_dir),
        "state": {k: pcm.state(user).get(k) for k in ("working_memory", "pending_consolidation", "committed_turn")},
    }


@pytest.mark.parametrize("failure", ["last node raises", "commit raises"])
def test_a_turn_that_fails_at_its_end_leaves_nothing_in_memory_or_on_disk(ctx, monkeypatch, failure):
    armed = False
    original = memory_nodes.persist

    def persist(state, ctx, services):
        if armed and failure == "last node raises":
            raise RuntimeError("injected failure")
        return original(state, ctx, services)

    monkeypatch.setattr(memory_nodes, "persist", persist)
    pcm = PCM(ctx.replace(token_budget=40, eviction_size=1))  # SQLite checkpointer: working memory on disk
    pcm.process("I moved to Lisbon last spring and I teach chemistry.", user_id="a")
    pcm.process("My sister Ana visits me in Lisbon every summer.", user_id="a")
    before = _snapshot(pcm, "a")
    armed = True
    if failure == "commit raises":
        monkeypatch.setattr(
            pcm.services.store.records,
            "commit",
            lambda *a, **k: (_ for _ in ()).throw(RuntimeError("injected failure")),
        )
    with pytest.raises(RuntimeError, match="injected"):
        pcm.process("Actually I quit teaching, I now work as a chemist in Porto.", user_id="a")
    assert _snapshot(pcm, "a") == before
    assert _snapshot(PCM(ctx), "a") == before  # and so does a fresh process
    armed = False
    monkeypatch.setattr(
        pcm.services.store.records,
        "commit",
        type(pcm.services.store.records).commit.__get__(pcm.services.store.records),
    )
    out = pcm.process("Actually I quit teaching, I now work as a chemist in Porto.", user_id="a")
    assert out["turn"] == 3  # the failed turn took no number
    assert _snapshot(pcm, "a")["rows"]["seq"] > before["rows"]["seq"]


def test_a_failed_turn_leaves_nothing_in_the_served_graph_either(ctx, monkeypatch):
    """No wrapper: the graph as `langgraph dev` runs it, with a checkpointer, invoked directly."""
    services = Services(ctx.replace(lock_timeout=5))
    graph = build_graph(services, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "studio"}}
    graph.invoke({"user_input": "I adopted a greyhound called Juno.", "user_id": "s"}, config, context=services.ctx)
    memory = services.store.open("s")
    before = (
        memory.export(),
        sorted(memory.vectors.ids()),
        stored_rows(ctx.data_dir),
        graph.get_state(config).values["working_memory"],
    )
    monkeypatch.setattr(memory.records, "commit", lambda *a, **k: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError):
        graph.invoke(
            {"user_input": "Juno hates the rain and loves the beach.", "user_id": "s"}, config, context=services.ctx
        )
    monkeypatch.undo()
    assert (
        memory.export(),
        sorted(memory.vectors.ids()),
        stored_rows(ctx.data_dir),
        graph.get_state(config).values["working_memory"],
    ) == before
    out = graph.invoke(
        {"user_input": "Juno hates the rain and loves the beach.", "user_id": "s"}, config, context=services.ctx
    )  # the lock was released
    assert out["turn"] == 2 and len(services.store.open("s")) > len(before[0]["graph"]["nodes"])


def test_a_second_writer_waits_then_gets_a_clear_error(ctx):
    services = Services(ctx.replace(lock_timeout=0.5))
    store = services.store
    with store.exclusive("busy"):
        with pytest.raises(MemoryBusyError, match="lock_timeout"):
            PCM(services.ctx, services, checkpointer=None).process("hello there", user_id="busy")
    assert PCM(services.ctx, services, checkpointer=None).process("hello there", user_id="busy")["turn"] == 1


# ---------------------------------------------------------------------- LRU, as-of, migration
def test_lru_keeps_few_users_open_and_evicted_users_reload_intact(ctx):
    services = Services(ctx.replace(open_users=2))
    store = services.store
    for n in range(5):
        memory = store.open(f"user-{n}")
        for k in range(3):
            memory.add_node(fact(f"user {n} memory {k}: likes {TOPICS[k]}"), reason="t", agent="t")
        memory.save()
        assert len(store.cached_users()) <= 2
    assert store.cached_users() == ["user-3", "user-4"]
    assert store.chroma.client._server.hnsw_cache_size == 2  # Chroma's own cache is bounded alike
    reopened = store.open("user-0", create=False)
    assert reopened.retrievable_count() == 3 and {n.content for n in reopened.nodes(types=RETRIEVABLE_TYPES)} == {
        f"user 0 memory {k}: likes {TOPICS[k]}" for k in range(3)
    }
    query = "who likes chess openings?"
    assert reopened.lexical_search(query, 5) and reopened.dense_search(services.embedder.encode_one(query), 5)
    assert store.cached_users() == ["user-4", "user-0"]


def test_users_whose_vector_index_embedded_chroma_evicted_are_searched_again(tmp_path):
    """Embedded Chroma (1.5) cannot reload an index it evicted from its bounded cache when that
    index's files were never persisted (below 1,000 writes): "Error creating hnsw segment reader:
    Nothing found on disk". Served round-robin, users past the cache hit it on their next visit."""
    from pcm.world.chroma import ChromaConnection
    from pcm.world.vectors import VectorIndex

    connection = ChromaConnection("chroma", str(tmp_path), cached_indexes=2)
    rng = np.random.default_rng(0)
    indexes = [VectorIndex(connection, f"visitor-{n}") for n in range(14)]
    for n, index in enumerate(indexes):
        for k in range(0, 6, 2):
            index.put([(f"v{n}-{k + j}", rng.random(384).astype(np.float32), {"norm": 1.0}, False) for j in range(2)])
    connection.restart(connection.generation)  # as a new process: indexes load from disk and log
    query = rng.random(384).astype(np.float32)
    for _ in range(5):
        for n, index in enumerate(indexes):
            assert {i for i, _ in index.query(query, 6)} == {f"v{n}-{k}" for k in range(6)}


def test_a_reopened_memory_reads_its_stored_words_and_tokenises_nothing(ctx, monkeypatch):
    store = Services(ctx).store
    memory = store.open("reader")
    for k, topic in enumerate(TOPICS):
        memory.add_node(fact(f"memory {k}: I spent the evening on {topic}"), reason="t", agent="t")
    memory.save()
    expected = memory.lexical_search("sourdough evening", 3)
    assert expected

    def no_tokenising(*args, **kwargs):
        raise AssertionError("a reopened memory re-tokenised a memory whose words are stored")

    monkeypatch.setattr(memory_words, "lexical_terms", no_tokenising)
    reopened = Services(ctx).store.open("reader", create=False)
    assert reopened.retrievable_count() == len(TOPICS)
    monkeypatch.undo()
    assert reopened.lexical_search("sourdough evening", 3) == expected


def test_chroma_finds_a_collections_log_rows_by_index_not_by_scanning_the_log(ctx):
    memory = Services(ctx).store.open("logged")
    memory.add_node(fact("I keep bees on the roof"), reason="t", agent="t")
    memory.save()
    with sqlite3.connect(Path(ctx.data_dir) / "chroma" / "chroma.sqlite3") as db:
        assert db.execute("SELECT COUNT(*) FROM embeddings_queue").fetchone()[0] >= 1
        # the statements Chroma runs on every write (reading, then purging, one collection's rows)
        for statement in (
            "SELECT * FROM embeddings_queue WHERE topic = ? AND seq_id > ? ORDER BY seq_id",
            "DELETE FROM embeddings_queue WHERE topic = ? AND seq_id < ?",
        ):
            plan = " ".join(row[-1] for row in db.execute(f"EXPLAIN QUERY PLAN {statement}", ("t", 0)))
            assert "pcm_embeddings_queue_topic" in plan, plan


def test_search_as_of_rebuilds_weights_and_supersedes_links(pcm):
    first, second = "2024-01-10T09:00:00+00:00", "2024-06-10T09:00:00+00:00"
    pcm.process("I work at Google as a backend engineer.", user_id="o", timestamp=first)
    old = pcm.memory("o").nodes()[0]
    out = pcm.process(
        "I left Google, I now work at Microsoft.",
        user_id="o",
        timestamp=second,
        force_level="high",
        target_ids=[old.id],
    )
    new_id = out["changes"][0]["node_id"]
    now = {m.id: m for m in pcm.search("Where do I work?", user_id="o")}
    assert now[old.id].weight < old.weight and new_id in now
    then = {m.id: m for m in pcm.search("Where do I work?", user_id="o", as_of="2024-03-01")}
    assert set(then) == {old.id} and then[old.id].weight == pytest.approx(old.weight)
    view = pcm.memory("o").as_of(datetime(2024, 3, 1, tzinfo=timezone.utc))
    assert view.in_edges(old.id, "supersedes") == [] and len(view.history(old.id)) == 1
    later = pcm.memory("o").as_of(datetime(2024, 7, 1, tzinfo=timezone.utc))
    assert [s for s, _ in later.in_edges(old.id, "supersedes")] == [new_id]


def test_search_as_of_also_ranks_memories_in_the_other_script(pcm):
    """An English question about a Chinese conversation, asked of the memory as it stood then:
    only what existed then, ranked by P(d|I)·w as the live memory would rank it."""
    pcm.process("我现在住在杭州。", user_id="z", timestamp="2024-01-10T09:00:00+00:00")
    pcm.process("我上个月搬到广州了。", user_id="z", timestamp="2024-06-10T09:00:00+00:00")
    first, second = [n.id for n in sorted(pcm.memory("z").nodes(types=[NodeType.FACT]), key=lambda n: n.created_at)]
    assert [m.id for m in pcm.search("Where does the user live?", user_id="z", as_of="2024-03-01")] == [first]
    assert {first, second} <= {m.id for m in pcm.search("Where does the user live?", user_id="z")}


def test_cli_shows_a_memory_as_of_a_date(ctx):
    from typer.testing import CliRunner

    from pcm.cli import app

    pcm = PCM(ctx)
    pcm.process("I live in Berlin.", user_id="c", timestamp="2024-01-01T10:00:00+00:00")
    node = pcm.memory("c").nodes()[0]
    pcm.memory("c").update_node(
        node.id, weight=0.2, reason="test", agent="test", now=datetime(2024, 8, 1, tzinfo=timezone.utc)
    )
    pcm.memory("c").save()
    runner = CliRunner()
    shown = runner.invoke(
        app, ["memory", "show", node.id, "--as-of", "2024-02-01", "--data-dir", ctx.data_dir, "--user", "c"]
    )
    assert shown.exit_code == 0, shown.output
    weight = float(re.search(r'"weight": ([0-9.]+)', shown.output).group(1))
    assert weight == pytest.approx(node.weight) and "2024-08-01" not in shown.output
    bad = runner.invoke(
        app, ["memory", "show", node.id, "--as-of", "last week", "--data-dir", ctx.data_dir, "--user", "c"]
    )
    assert bad.exit_code == 2 and "ISO" in bad.output


def test_a_graph_json_data_directory_is_migrated_on_first_open(ctx, tmp_path):
    services = Services(ctx)
    embedder = services.embedder
    key = user_key("legacy")
    folder = Path(ctx.data_dir) / "users" / key
    folder.mkdir(parents=True)
    graph = nx.DiGraph()
    facts = [
        fact("Lea studies marine biology in Kiel"),
        fact("Lea might switch to oceanography", weight=0.4, node_type=NodeType.HYPOTHESIS, keywords=["oceanography"]),
    ]
    entity = fact("Kiel", weight=0.6, node_type=NodeType.ENTITY)
    for node in (*facts, entity):
        graph.add_node(node.id, **node.model_dump(mode="json"))
    graph.add_edge(
        facts[0].id,
        entity.id,
        **MemoryEdge(source=facts[0].id, target=entity.id, relation="mentions", weight=0.6).model_dump(mode="json"),
    )
    (folder / "graph.json").write_text(json.dumps(nx.node_link_data(graph, **NODE_LINK)))
    (folder / "user.json").write_text(json.dumps({"user_id": "legacy"}))
    event = MemoryChange(
        node_id=facts[0].id,
        content=facts[0].content,
        old_weight=None,
        new_weight=0.8,
        reason="observed",
        agent="maintenance",
        turn=1,
    )
    (folder / "audit.jsonl").write_text(event.model_dump_json() + "\n" + '{"node_id": "m-x", "trunc')
    legacy = services.store.chroma.client.get_or_create_collection(
        key, embedding_function=None, metadata={"hnsw:space": "cosine"}
    )
    nodes = (*facts, entity)
    legacy.upsert(
        ids=[n.id for n in nodes],
        embeddings=embedder.encode([n.content for n in nodes]),
        metadatas=[{"type": n.type.value, "weight": n.weight, "dormant": False} for n in nodes],
    )
    assert services.store.users() == ["legacy"]

    memory = services.store.open("legacy", create=False)
    assert [n.id for n in memory.nodes() if n.type != NodeType.DAY] == [n.id for n in nodes]
    assert all(memory.out_edges(n.id, "said_on") for n in nodes if n.type in RETRIEVABLE_TYPES)  # linked to its day
    assert [e.relation for e in memory.edges() if e.relation != "said_on"] == ["mentions"]
    assert [e.reason for e in memory.history(facts[0].id)] == ["observed"]
    assert memory.vectors.ids() == {n.id for n in facts}  # the entity's vector is gone
    assert not (folder / "graph.json").exists() and (folder / "graph.json.migrated").exists()
    assert Services(ctx).store.open("legacy", create=False).export()["graph"] == memory.export()["graph"]


# ---------------------------------------------------------------------- ingestion
def test_ingest_is_idempotent_by_message_id(pcm, tmp_path):
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(conversation(6)))
    turns = read_conversation(path, pcm.ctx)
    assert len({t.message_id for t in turns}) == 6
    first = ingest_turns(pcm, turns[:4], "i", consolidate=False)
    assert first["already_stored"] == 0
    again = ingest_turns(pcm, turns, "i")
    assert again["already_stored"] == 4 and sum(again["agents"].values()) == 2
    contents = [n.content for n in pcm.memory("i").nodes(types=[NodeType.FACT])]
    assert sorted(c for c in contents if c.startswith("user: Day")) == sorted(f"user: {t.content}" for t in turns)
    entities = len(pcm.memory("i").nodes(types=[NodeType.ENTITY]))
    assert ingest_turns(pcm, turns, "i")["already_stored"] == 6
    assert len(pcm.memory("i").nodes(types=[NodeType.ENTITY])) == entities


# ---------------------------------------------------------------------- processes
def _check_store(data_dir: str, acked: set[str]) -> dict:
    """Open the store as a fresh process would and check it: every acknowledged message is
    stored, every memory once, every edge and audit event points at a stored memory, and the
    vector index holds exactly the retrievable memories."""
    services = Services(load(data_dir))
    memory = services.store.open("shared", create=False)
    stored = {m for m in acked if memory.has_message(m)}
    assert stored == acked, f"acknowledged but lost: {sorted(acked - stored)[:5]}"
    observations = [n.content for n in memory.nodes(types=[NodeType.FACT]) if n.content.startswith("user: Day")]
    assert len(observations) == len(set(observations)), "a message was stored twice"
    assert all(s in memory and t in memory for s, t in memory.graph.edges)
    assert {e.node_id for e in memory.read_audit()} <= set(memory.graph.nodes)
    assert memory.vectors.ids() == {n.id for n in memory.nodes(types=RETRIEVABLE_TYPES)}
    return {"observations": len(observations)}


def load(data_dir: str):
    from pcm.config import load_context

    return load_context(data_dir=data_dir, router="threshold")


class Zygote:
    """tests/storage_worker.py: forks a fresh writer process per command, models preloaded."""

    def __init__(self, data_dir: str):
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER), data_dir], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        assert self.process.stdout.readline().strip() == "zygote ready"

    def ask(self, *command: str) -> str:
        self.process.stdin.write(" ".join(command) + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().split()[1]

    def start(self, *command: str) -> int:
        return int(self.ask(*command))

    def wait(self, pid: int) -> int:
        return int(self.ask("reap", str(pid)))

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=60)


def _lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def _wait_for(log: Path, done, timeout: float = 600) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = _lines(log)
        if done(lines):
            return lines
        time.sleep(0.01)
    raise TimeoutError(f"{log} did not reach the expected state: {_lines(log)[-3:]}")


@pytest.mark.slow
def test_ingestion_survives_20_kill_9s_and_resumes_without_duplicates(tmp_path):
    data_dir = str(tmp_path / "data")
    path = tmp_path / "chat.json"
    messages = conversation(100, seed=1)
    path.write_text(json.dumps(messages))
    rng = random.Random(20)
    zygote = Zygote(data_dir)
    acked: set[str] = set()
    killed = 0
    try:
        for cycle in range(20):
            log = tmp_path / f"ingest-{cycle}.log"
            pid = zygote.start("ingest", data_dir, str(path), str(log))
            wanted = rng.randint(0, 3)  # kill after this many stored turns, at a random moment
            lines = _wait_for(
                log, lambda ls: "done" in ls or sum(x.startswith("ack ") for x in ls) >= wanted and "ready" in ls
            )
            time.sleep(rng.uniform(0.0, 0.25))  # inside a turn, a commit or an index write
            os.kill(pid, signal.SIGKILL)
            status = zygote.wait(pid)
            killed += status == -signal.SIGKILL
            assert status in (0, -signal.SIGKILL)
            acked |= {x.split()[1] for x in _lines(log) if x.startswith("ack ")}
            assert "done" not in lines
            _check_store(data_dir, acked)
        assert killed == 20
        log = tmp_path / "ingest-final.log"
        pid = zygote.start("ingest", data_dir, str(path), str(log))
        _wait_for(log, lambda ls: "done" in ls)
        assert zygote.wait(pid) == 0
    finally:
        zygote.close()
    assert _check_store(data_dir, acked)["observations"] == len(messages)


@pytest.mark.slow
def test_two_processes_and_two_threads_store_100_turns_without_loss(tmp_path):
    data_dir = str(tmp_path / "data")
    zygote = Zygote(data_dir)
    try:
        logs = [tmp_path / f"{name}.log" for name in ("p1", "p2")]
        pids = [zygote.start("concurrent", data_dir, name, "25", str(log)) for name, log in zip(("p1", "p2"), logs)]
        for pid, log in zip(pids, logs):
            assert zygote.wait(pid) == 0
            assert _lines(log) == ["errors []"], _lines(log)
    finally:
        zygote.close()
    pcm = PCM(load(data_dir))
    memory = pcm.memory("shared")
    notes = [n.content for n in memory.nodes(types=[NodeType.FACT]) if " writer " in n.content]
    assert len(notes) == len(set(notes)) == 100
    assert all(memory.has_message(f"{p}-{i}-{n}") for p in ("p1", "p2") for i in range(2) for n in range(25))
    assert pcm.state("shared", "t")["committed_turn"] == 100  # no checkpoint update was lost
    assert memory.vectors.ids() == {n.id for n in memory.nodes(types=RETRIEVABLE_TYPES)}


# ---------------------------------------------------------------------- real servers
@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    from pcm.devservers import postgres_bin, start_chroma, start_postgres, stop_chroma, stop_postgres

    if postgres_bin() is None:
        pytest.skip("PostgreSQL is not installed (make install installs it with apt-get as root)")
    postgres = start_postgres()
    try:
        chroma = start_chroma(tmp_path_factory.mktemp("chroma-server"))
    except BaseException:
        stop_postgres(postgres["folder"])
        raise
    yield {"postgres_url": postgres["url"], "chroma_url": chroma["url"]}
    stop_chroma(chroma["pid"])
    stop_postgres(postgres["folder"])


def test_pcm_runs_on_a_postgres_and_chroma_server_deployment(ctx, servers):
    deployed = ctx.replace(graph_store="postgres", checkpointer="postgres", vector_store="chroma-server", **servers)
    pcm = PCM(deployed)
    for text in (
        "I work at Google as a site reliability engineer.",
        "My dog Juno loves the beach in Porto.",
        "I left Google last month and joined a startup in Porto.",
    ):
        pcm.process(text, user_id="srv", thread_id="main")
    found = pcm.search("Where does my dog like to go?", user_id="srv")
    assert "Juno" in found[0].content
    assert not (Path(ctx.data_dir) / "memory.sqlite").exists() and not (Path(ctx.data_dir) / "chroma").exists()
    fresh = PCM(deployed, Services(deployed))  # another process's view: everything is on the servers
    memory = fresh.memory("srv", create=False)
    assert len(memory) == len(pcm.memory("srv"))
    assert memory.vectors.ids() == {n.id for n in memory.nodes(types=RETRIEVABLE_TYPES)}
    assert fresh.state("srv", "main")["committed_turn"] == 3
    assert [m.id for m in fresh.search("Where does my dog like to go?", user_id="srv")] == [m.id for m in found]
    out = fresh.process("Juno also likes swimming in the river.", user_id="srv", thread_id="main")
    assert out["turn"] == 4


def _open_records(data_dir: str, barrier, answers) -> None:
    from pcm.world.records import GraphRecords

    barrier.wait()
    try:
        GraphRecords("sqlite", data_dir).close()
        answers.put("ok")
    except Exception as error:  # the parent asserts on what each process answered
        answers.put(repr(error))


def test_processes_opening_a_new_data_directory_together_all_open_it(tmp_path):
    """Six processes open one new SQLite file at the same moment, 15 times. Switching the file to
    WAL answered "database is locked" without waiting (9 of 180 opens failed before the retry)."""
    import multiprocessing

    fork = multiprocessing.get_context("fork")
    answers = []
    for trial in range(15):
        barrier, queue = fork.Barrier(6), fork.Queue()
        processes = [
            fork.Process(target=_open_records, args=(str(tmp_path / str(trial)), barrier, queue)) for _ in range(6)
        ]
        for process in processes:
            process.start()
        answers += [queue.get(timeout=120) for _ in processes]
        for process in processes:
            process.join(timeout=120)
    assert answers == ["ok"] * 90
