"""How PCM's cost grows with memory: `make bench-scale` (`python -m evals scale`).

For each storage configuration (embedded: SQLite + Chroma in-process; servers: PostgreSQL +
a `chroma run` server on loopback, both started here) and each size, one user's memory is
bulk-loaded through the documented path, `memory.add_node(MemoryNode(...), reason=...,
agent=..., embedding=...)` then `save()`, from LoCoMo turns: every turn of every conversation
once, then again with a counter where more are needed ("... (copy 3)"). Each distinct turn is
embedded once (and kept in `<out>/embeddings.npz` for the next run); a copy reuses its original's
vector with a small fixed perturbation (so the vector index does not hold exact duplicates). Then a
fresh process (models loaded first, not timed) measures:

- cold open: opening that user's memory from the store (rows, lexical index, vector index
  check), after connecting to the stores (reported apart: it does not depend on the size);
- `PCM.process()` p50/p95 over the turns of one LoCoMo conversation, replayed as new turns;
- bytes written per turn: embedded, what the process passed to write(2) per turn (/proc/self/io
  wchar: graph store, vector index and checkpointer together); with servers, the PostgreSQL WAL
  generated plus the growth of the Chroma server's folder, per turn;
- `PCM.search()` p50 over that conversation's questions;
- RSS at the end (models included).

Last, many users: `users` users of `per_user` memories each, served round-robin (one turn
each) from one process with the LRU of open memories on; its peak RSS, and every node counted
after reopening the store in a fresh process.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import numpy as np

from pcm.config import PCMContext, load_context
from pcm.datasets.locomo import Conversation, load_locomo
from pcm.models import MemoryNode, MemorySource, NodeType

logger = logging.getLogger(__name__)
BATCH = 5000
PERTURBATION = 0.02


def rss_mb() -> float:
    """Resident memory of this process now, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def peak_rss_mb() -> float:
    """This process's peak resident memory, in MB: VmHWM, not getrusage's ru_maxrss, which Linux
    carries over from the parent that forked this process (its whole RSS at the fork)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bytes_written() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


class TurnSource:
    """LoCoMo turns with their embeddings, each distinct text embedded once."""

    def __init__(self, conversations: list[Conversation], embedder, cache: Path | None = None):
        self.rows = [(c.sample_id, s, t) for c in conversations for s in c.sessions for t in s.turns]
        texts = list(dict.fromkeys(t.full_text for _, _, t in self.rows))
        started = time.perf_counter()
        if cache is not None and cache.exists() and list(np.load(cache)["texts"]) == texts:
            vectors = np.load(cache)["vectors"]
        else:
            vectors = np.concatenate([embedder.encode(texts[i : i + 2048]) for i in range(0, len(texts), 2048)])
            if cache is not None:
                cache.parent.mkdir(parents=True, exist_ok=True)
                np.savez(cache, texts=np.asarray(texts), vectors=vectors)
        self.vectors = dict(zip(texts, np.asarray(vectors, dtype=np.float32)))
        self.embed_seconds = time.perf_counter() - started
        self.rng = np.random.default_rng(0)

    def memory(self, index: int, user_tag: str = "") -> tuple[MemoryNode, np.ndarray]:
        """The index-th bulk memory: the turn `index mod len`, copy `index div len`."""
        sample, session, turn = self.rows[index % len(self.rows)]
        copy = index // len(self.rows)
        vector = self.vectors[turn.full_text]
        content = f"{turn.speaker}: {turn.full_text}"
        if copy:
            content += f" (copy {copy})"
            vector = vector + PERTURBATION * self.rng.standard_normal(vector.shape).astype(np.float32)
            vector /= np.linalg.norm(vector)
        moment = (session.timestamp or session_time_fallback()) - timedelta(days=400 * (copy + 1))
        node = MemoryNode(
            id=f"m-bulk-{user_tag}{index}",
            content=content,
            type=NodeType.FACT,
            weight=0.6,
            created_at=moment,
            updated_at=moment,
            last_accessed=moment,
            source=MemorySource(
                turn=index, dialog_ids=[f"{sample}:{turn.dia_id}#{copy}"], speaker=turn.speaker, session_time=moment
            ),
        )
        return node, vector


def session_time_fallback():
    from pcm.models import as_utc

    return as_utc("2023-01-01T00:00:00+00:00")


def bulk_load(store, user_id: str, source: TurnSource, count: int, tag: str = "") -> float:
    """Load `count` memories into one user's memory through the public API; returns seconds."""
    started = time.perf_counter()
    memory = store.open(user_id)
    for start in range(0, count, BATCH):
        for index in range(start, min(count, start + BATCH)):
            node, vector = source.memory(index, tag)
            memory.add_node(node, reason="bulk load", agent="bench", embedding=vector)
        memory.save()
    return time.perf_counter() - started


# ---------------------------------------------------------------------- the measuring process
def server_bytes(ctx: PCMContext, chroma_path: str) -> int:
    """With servers: PostgreSQL's WAL position plus the size of the Chroma server's folder (what
    the servers wrote, since the client process writes nothing to disk itself)."""
    total = 0
    if ctx.graph_store == "postgres":
        import psycopg

        with psycopg.connect(ctx.postgres_url) as connection:
            total += int(connection.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')").fetchone()[0])
    if chroma_path:
        total += sum(f.stat().st_size for f in Path(chroma_path).rglob("*") if f.is_file())
    return total


def measure(ctx: PCMContext, user_id: str, data: str, turns: int, questions: int, chroma_path: str = "") -> dict:
    """Run in a fresh process: cold open, process() and search() timings, bytes written, RSS."""
    from pcm.api import PCM
    from pcm.services import Services

    services = Services(ctx)
    _ = services.embedder, services.intent_router, services.language_model  # models first, not timed
    started = time.perf_counter()
    store = services.store
    connect = time.perf_counter() - started
    started = time.perf_counter()
    memory = store.open(user_id, create=False)
    cold_open = time.perf_counter() - started
    size = memory.retrievable_count()
    pcm = PCM(ctx, services)
    conversation = load_locomo(data)[0]
    server_bytes_before = server_bytes(ctx, chroma_path)
    timings, written = [], []
    for session in conversation.sessions:
        for turn in session.turns:
            if len(timings) >= turns:
                break
            before = bytes_written()
            began = time.perf_counter()
            pcm.process(
                turn.full_text,
                user_id=user_id,
                speaker=turn.speaker,
                timestamp=session.timestamp.isoformat() if session.timestamp else None,
                dialog_ids=[f"bench:{turn.dia_id}"],
            )
            timings.append(time.perf_counter() - began)
            written.append(bytes_written() - before)
    server_bytes_per_turn = (server_bytes(ctx, chroma_path) - server_bytes_before) / max(1, len(timings))
    searches = []
    for question in conversation.qa[:questions]:
        began = time.perf_counter()
        pcm.search(question.question, user_id=user_id)
        searches.append(time.perf_counter() - began)
    seconds = np.asarray(timings)
    return {
        "memories": size,
        "connect_s": connect,
        "cold_open_s": cold_open,
        "process_p50_s": float(np.percentile(seconds, 50)),
        "process_p95_s": float(np.percentile(seconds, 95)),
        "search_p50_ms": 1000 * float(np.median(searches)),
        "bytes_per_turn": float(np.mean(written)) + server_bytes_per_turn,
        "client_bytes_per_turn": float(np.mean(written)),
        "server_bytes_per_turn": server_bytes_per_turn,
        "rss_mb": rss_mb(),
        "turns": len(timings),
        "searches": len(searches),
    }


def serve_many(ctx: PCMContext, users: int, data: str) -> dict:
    """Run in a fresh process: one turn per user, round-robin, with the LRU on; peak RSS."""
    from pcm.api import PCM
    from pcm.services import Services

    services = Services(ctx)
    services.warm_up()
    pcm = PCM(ctx, services)
    turns = [t for c in load_locomo(data)[:1] for t in c.turns]
    started = time.perf_counter()
    timings = []
    for index in range(users):
        turn = turns[index % len(turns)]
        began = time.perf_counter()
        pcm.process(turn.full_text, user_id=f"user-{index}", speaker=turn.speaker)
        timings.append(time.perf_counter() - began)
    return {
        "served_turns": users,
        "seconds": time.perf_counter() - started,
        "process_p50_s": float(np.median(timings)),
        "peak_rss_mb": peak_rss_mb(),
        "open_memories": len(services.store.cached_users()),
    }


def count_nodes(ctx: PCMContext, users: int) -> dict:
    """Run in a fresh process: reopen every user and count its memories."""
    from pcm.services import Services

    store = Services(ctx).store
    counts = [len(store.open(f"user-{i}", create=False)) for i in range(users)]
    return {"users": users, "nodes": int(sum(counts)), "min_per_user": min(counts), "peak_rss_mb": peak_rss_mb()}


def _in_fresh_process(function: str, ctx: PCMContext, *args) -> dict:
    fields = {f.name: getattr(ctx, f.name) for f in dataclasses.fields(ctx)}
    payload = json.dumps({"function": function, "ctx": fields, "args": args})
    run = subprocess.run(
        [sys.executable, "-m", "evals.bench.scale", payload],
        capture_output=True,
        text=True,
        timeout=3600,
        env={**os.environ, "TOKENIZERS_PARALLELISM": "false"},
    )
    if run.returncode != 0:
        raise RuntimeError(f"{function} failed: {run.stderr[-3000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------- the benchmark
def run_scale(
    data: str,
    sizes: list[int],
    users: int,
    per_user: int,
    turns: int,
    questions: int,
    configurations: list[str],
    progress=logger.info,
    embedding_cache: Path | None = None,
) -> dict:
    from pcm.devservers import start_chroma, start_postgres, stop_chroma, stop_postgres
    from pcm.services import Services

    conversations = load_locomo(data)
    results: dict = {
        "data": data,
        "sizes": sizes,
        "machine": f"{platform.machine()} cpus={os.cpu_count()}",
        "python": platform.python_version(),
        "rows": [],
        "many_users": [],
    }
    base = load_context(router="calibrated")
    embedder = Services(base.replace(data_dir=tempfile.mkdtemp(prefix="pcm-scale-embed-"))).embedder
    source = TurnSource(conversations, embedder, embedding_cache)
    results["distinct_turns"] = len(source.vectors)
    results["embedding_seconds"] = source.embed_seconds
    progress(f"embedded {len(source.vectors)} distinct LoCoMo turns in {source.embed_seconds:.0f} s")
    for configuration in configurations:
        servers: dict = {}
        try:
            with tempfile.TemporaryDirectory(prefix="pcm-scale-") as folder:
                ctx = base.replace(data_dir=f"{folder}/data")
                if configuration == "servers":
                    postgres = start_postgres()
                    servers["postgres"] = postgres["folder"]
                    chroma = start_chroma(f"{folder}/chroma-server")
                    servers["chroma"] = chroma["pid"]
                    servers["chroma_path"] = f"{folder}/chroma-server"
                    ctx = ctx.replace(
                        graph_store="postgres",
                        checkpointer="postgres",
                        vector_store="chroma-server",
                        postgres_url=postgres["url"],
                        chroma_url=chroma["url"],
                    )
                store = Services(ctx).store
                loaded = 0
                user_id = "bench-user"
                for size in sizes:
                    user_id = f"bench-{size}"
                    seconds = bulk_load(store, user_id, source, size)
                    progress(f"[{configuration}] bulk-loaded {size} memories in {seconds:.0f} s")
                    row = {
                        "configuration": configuration,
                        "size": size,
                        "bulk_load_s": seconds,
                        **_in_fresh_process(
                            "measure", ctx, user_id, data, turns, questions, servers.get("chroma_path", "")
                        ),
                    }
                    results["rows"].append(row)
                    progress(json.dumps(row))
                    loaded += size
                if users:
                    many = ctx.replace(open_users=64)
                    started = time.perf_counter()
                    for index in range(users):
                        bulk_load(store, f"user-{index}", source, per_user, tag=f"u{index}-")
                    load_seconds = time.perf_counter() - started
                    progress(f"[{configuration}] bulk-loaded {users} users x {per_user} in {load_seconds:.0f} s")
                    served = _in_fresh_process("serve_many", many, users, data)
                    counted = _in_fresh_process("count_nodes", many, users)
                    row = {
                        "configuration": configuration,
                        "users": users,
                        "per_user": per_user,
                        "bulk_load_s": load_seconds,
                        **served,
                        "counted": counted,
                        "expected_nodes_at_least": users * (per_user + 1),
                    }
                    results["many_users"].append(row)
                    progress(json.dumps(row))
        finally:
            if "chroma" in servers:
                stop_chroma(servers["chroma"])
            if "postgres" in servers:
                stop_postgres(servers["postgres"])
    return results


def report(results: dict) -> str:
    lines = [
        "| storage | memories | process p50 | process p95 | search p50 | bytes written / turn | cold open "
        "(+ connect) | RSS |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in results["rows"]:
        lines.append(
            f"| {row['configuration']} | {row['size']:,} | {row['process_p50_s']:.3f} s | "
            f"{row['process_p95_s']:.3f} s | {row['search_p50_ms']:.0f} ms | "
            f"{row['bytes_per_turn'] / 1024:.0f} KiB | {row['cold_open_s']:.2f} s (+{row.get('connect_s', 0):.2f} s) | "
            f"{row['rss_mb']:.0f} MB |"
        )
    if results["many_users"]:
        lines += [
            "",
            "| storage | users × memories | turns served | process p50 | peak RSS (LRU 64) | nodes after reopening |",
            "|---|---|---|---|---|---|",
        ]
        for row in results["many_users"]:
            lines.append(
                f"| {row['configuration']} | {row['users']:,} × {row['per_user']} | {row['served_turns']:,} "
                f"| {row['process_p50_s']:.3f} s | {row['peak_rss_mb']:.0f} MB | "
                f"{row['counted']['nodes']:,} (≥ {row['expected_nodes_at_least']:,} expected) |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    request = json.loads(sys.argv[1])
    logging.basicConfig(level=logging.WARNING)
    context = load_context(**request["ctx"])  # every field given: the environment changes none
    print(json.dumps(globals()[request["function"]](context, *request["args"])))
