"""Search latency while another process writes the same user, with embedded storage (issue 43, item 5).

This process ingests a few turns of a LoCoMo conversation (the memory to search), runs searches
with no writer (the baseline), then starts a writer process that ingests the next turns of the
conversation into the same user, one `PCM.process` per turn (as `pcm ingest` does), and searches
that user from here, one search after another, until the writer is done. Each search is timed
around `PCM.search` alone; models are loaded in both processes (and one search run) before
anything is timed, and the question's embedding is dropped from the embedder's cache first, so
every search embeds its question as a new one would (the questions repeat after 199). A search
fails if it raises (the time until it did is among the latencies); it is stale if it did not see
a turn the writer had committed before it began.

The writer appends `commit SEQ STARTED ENDED` per turn to a log (times from `time.monotonic()`,
one clock for every process on Linux), so the report can say how many turns the writer committed
while searches ran, and during any one search (with a lock that readers wait for until the
writer's whole run ends, that was every turn of the run).

Run it with `python -m evals concurrency --out DIR` or `make bench-concurrency`.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

#: this module as `python -m` names it, and the folder that holds its top package (for the writer process)
MODULE = __spec__.name if __spec__ is not None else "evals.bench.concurrency"
ROOT = Path(__file__).resolve().parents[MODULE.count(".")]
USER = "concurrency"
THREAD = "main"


def storage_context(data_dir: str, config: str | None = None):
    """The settings of both processes: embedded storage (SQLite + embedded Chroma) under `data_dir`."""
    from pcm.config import load_context

    return load_context(config, data_dir=data_dir, graph_store="sqlite", vector_store="chroma", checkpointer="sqlite")


def conversation_turns(data: str, conversation: str | None = None) -> tuple[str, list[dict], list[str]]:
    """(sample id, turns as `PCM.process` keyword arguments, questions) of one LoCoMo conversation."""
    from pcm.datasets.locomo import load_locomo

    conversations = load_locomo(data)
    chosen = next((c for c in conversations if c.sample_id == conversation), None) if conversation else conversations[0]
    if chosen is None:
        raise ValueError(f"no conversation {conversation!r} in {data}")
    turns = [
        {
            "text": t.full_text,
            "speaker": t.speaker,
            "dialog_ids": [t.dia_id],
            "message_id": f"locomo:{t.dia_id}",
            "timestamp": s.timestamp.isoformat() if s.timestamp else None,
        }
        for s in chosen.sessions
        for t in s.turns
    ]
    questions = [q.question for q in chosen.qa if q.question.strip()]
    return chosen.sample_id, turns, questions


def process_turn(pcm, turn: dict) -> None:
    pcm.process(
        turn["text"],
        user_id=USER,
        thread_id=THREAD,
        speaker=turn["speaker"],
        timestamp=turn["timestamp"],
        dialog_ids=turn["dialog_ids"],
        message_id=turn["message_id"],
    )


def writer(
    data_dir: str, data: str, first: int, count: int, log_path: str, config: str = "", conversation: str = ""
) -> None:
    """The writer process: load the models, say "ready", then ingest turns first..first+count-1."""
    from pcm.api import PCM
    from pcm.services import Services

    ctx = storage_context(data_dir, config or None)
    services = Services(ctx)
    services.warm_up()
    pcm = PCM(ctx, services)
    _, turns, _ = conversation_turns(data, conversation or None)
    with open(log_path, "a", buffering=1) as log:
        log.write("ready\n")
        for turn in turns[first : first + count]:
            started = time.monotonic()
            process_turn(pcm, turn)
            seq = services.store.open(USER).seq
            log.write(f"commit {seq} {started:.6f} {time.monotonic():.6f}\n")
        log.write("done\n")


class WriterLog:
    """What the writer process appended to its log so far."""

    def __init__(self, path: Path):
        self.path = path
        self.ready = self.done = False
        self.commits: list[tuple[int, float, float]] = []  # seq, turn started, committed
        self._read = 0

    def poll(self) -> None:
        if not self.path.exists():
            return
        with open(self.path, encoding="utf-8") as file:
            file.seek(self._read)
            text = file.read()
        complete = text[: text.rfind("\n") + 1]
        self._read += len(complete.encode("utf-8"))
        for line in complete.splitlines():
            word, *rest = line.split()
            if word == "ready":
                self.ready = True
            elif word == "done":
                self.done = True
            elif word == "commit":
                self.commits.append((int(rest[0]), float(rest[1]), float(rest[2])))

    @property
    def last_seq(self) -> int:
        return self.commits[-1][0] if self.commits else 0


def percentiles(seconds: list[float]) -> dict:
    if not seconds:
        return {"count": 0}
    values = np.asarray(seconds)
    return {
        "count": len(seconds),
        "p50_s": round(float(np.percentile(values, 50)), 4),
        "p95_s": round(float(np.percentile(values, 95)), 4),
        "p99_s": round(float(np.percentile(values, 99)), 4),
        "max_s": round(float(values.max()), 4),
        "mean_s": round(float(values.mean()), 4),
    }


def start_writer(
    data_dir: str, data: str, first: int, count: int, log: Path, config: str = "", conversation: str = ""
) -> subprocess.Popen:
    env = dict(os.environ)
    import pcm

    # the writer imports the same `pcm` as this process (a copy of the tree, when comparing versions)
    here = [str(Path(pcm.__file__).resolve().parents[1]), str(ROOT)]
    env["PYTHONPATH"] = os.pathsep.join([*here, *filter(None, [env.get("PYTHONPATH")])])
    with open(log.with_suffix(".stderr"), "w") as errors:
        return subprocess.Popen(
            [sys.executable, "-m", MODULE, data_dir, data, str(first), str(count), str(log), config, conversation],
            cwd=str(ROOT),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )


def timed_searches(pcm, questions: list[str], limit: int, keep_going, log: WriterLog | None = None) -> dict:
    """Search the user, one question after another, while `keep_going()` and fewer than `limit`."""
    store = pcm.services.store
    latencies, errors, stale, during = [], [], 0, []
    started_at, ended_at = None, None
    number = 0
    while number < limit and keep_going():
        question = questions[number % len(questions)]
        number += 1
        if log is not None:
            log.poll()
        committed_before = log.last_seq if log is not None else 0
        pcm.services.embedder._cache.pop(question, None)
        began = time.monotonic()
        started_at = started_at if started_at is not None else began
        try:
            pcm.search(question, user_id=USER, top_k=10)
        except Exception as error:  # a failed search is a result here
            ended = time.monotonic()
            latencies.append(ended - began)  # the time it waited before failing counts too
            errors.append(f"{type(error).__name__}: {error}")
        else:
            ended = time.monotonic()
            latencies.append(ended - began)
            if store.open(USER).seq < committed_before:
                stale += 1
        ended_at = ended
        if log is not None:
            log.poll()
            during.append(sum(1 for _, _, committed in log.commits if began <= committed <= ended))
    return {
        "latencies": latencies,
        "errors": errors,
        "stale": stale,
        "during": during,
        "started": started_at,
        "ended": ended_at,
    }


def run_concurrency(
    data: str,
    turns: int = 60,
    searches: int = 1000,
    seed_turns: int = 20,
    config: str | None = None,
    conversation: str | None = None,
    data_dir: str | None = None,
    baseline_searches: int = 100,
    after_commits: int = 0,
    progress=print,
) -> dict:
    """Search p50/p95/p99/max with no writer (`baseline_searches` searches), then while a writer
    process ingests `turns` turns of the same user (searches until it is done, `searches` at most,
    from when it has committed `after_commits` turns: 0 includes its first open of the memory, which
    loads it under the commit lock); failed and stale searches; turns committed meanwhile."""
    import torch

    from pcm.api import PCM
    from pcm.services import Services

    sample_id, all_turns, questions = conversation_turns(data, conversation)
    if seed_turns + turns > len(all_turns):
        raise ValueError(f"{sample_id} has {len(all_turns)} turns; --seed-turns + --turns must not exceed it")
    with tempfile.TemporaryDirectory(prefix="pcm-concurrency-") as scratch:
        folder = data_dir or str(Path(scratch) / "data")
        ctx = storage_context(folder, config)
        services = Services(ctx)
        services.warm_up()
        pcm = PCM(ctx, services)
        for turn in all_turns[:seed_turns]:
            process_turn(pcm, turn)
        pcm.search(questions[0], user_id=USER, top_k=10)  # warm: first search, Chroma's index loaded
        load_before = os.getloadavg()
        progress(f"baseline: {baseline_searches} searches of {USER!r} ({seed_turns} turns stored), no writer")
        baseline = timed_searches(pcm, questions, baseline_searches, lambda: True)
        log_path = Path(scratch) / "writer.log"
        progress(f"starting a writer process for {turns} turns of {sample_id}")
        process = start_writer(folder, str(data), seed_turns, turns, log_path, str(config or ""), conversation or "")
        log = WriterLog(log_path)
        try:
            while not log.ready or len(log.commits) < after_commits:
                if process.poll() is not None:
                    raise RuntimeError(
                        f"the writer process ended (status {process.returncode}) before it was "
                        f"ready: {log_path.with_suffix('.stderr').read_text()[-2000:]}"
                    )
                time.sleep(0.05)
                log.poll()
            progress("writer ready; searching while it writes")
            contended = timed_searches(pcm, questions, searches, lambda: not log.done and process.poll() is None, log)
            status = process.wait(timeout=3600)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        log.poll()
        if status != 0 or not log.done:
            raise RuntimeError(
                f"the writer process failed (status {status}): {log_path.with_suffix('.stderr').read_text()[-2000:]}"
            )
        load_after = os.getloadavg()
    commits = log.commits
    writer_seconds = commits[-1][2] - commits[0][1] if commits else 0.0
    started, ended = contended["started"], contended["ended"]
    during_run = sum(1 for _, _, t in commits if started is not None and started <= t <= ended)
    turn_seconds = percentiles([b - a for _, a, b in commits])
    return {
        "data": str(data),
        "conversation": sample_id,
        "user": USER,
        "seed_turns": seed_turns,
        "searches_from_commit": after_commits,
        "machine": f"{platform.machine()} cpus={os.cpu_count()}",
        "torch_threads": torch.get_num_threads(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "lock_timeout_s": ctx.lock_timeout,
        "baseline": {
            **percentiles(baseline["latencies"]),
            "failed": len(baseline["errors"]),
            "stale": baseline["stale"],
        },
        "with_writer": {
            **percentiles(contended["latencies"]),
            "failed": len(contended["errors"]),
            "errors": contended["errors"][:5],
            "stale": contended["stale"],
            "turns_committed_while_searching": during_run,
            "max_turns_committed_during_one_search": max(contended["during"], default=0),
            "search_seconds": round((ended - started) if started is not None else 0.0, 2),
        },
        "writer": {
            "turns": len(commits),
            "seconds": round(writer_seconds, 2),
            **{f"turn_{k}": v for k, v in turn_seconds.items() if k != "count"},
        },
    }


def report(results: dict) -> str:
    base, busy, writer_ = results["baseline"], results["with_writer"], results["writer"]

    def row(name: str, figures: dict) -> str:
        cells = [
            str(figures.get("count", 0)),
            *(f"{figures.get(k, float('nan')):.3f}" for k in ("p50_s", "p95_s", "p99_s", "max_s")),
            str(figures["failed"]),
            str(figures["stale"]),
        ]
        return f"| {name} | {' | '.join(cells)} |"

    return "\n".join(
        [
            f"# Search latency while another process writes the same user ({results['conversation']}, "
            "embedded storage)",
            "",
            f"{results['machine']}; load average {results['load_average_before']} before, "
            f"{results['load_average_after']} after; {results['seed_turns']} turns stored before the searches"
            + (
                f"; searches from the writer's commit {results['searches_from_commit']} on."
                if results.get("searches_from_commit")
                else "."
            ),
            "",
            "| searches | count | p50 s | p95 s | p99 s | max s | failed | stale |",
            "|---|---|---|---|---|---|---|---|",
            row("no writer (baseline)", base),
            row("while a writer process ingests", busy),
            "",
            f"The writer committed {writer_['turns']} turns in {writer_['seconds']} s (turn p50 "
            f"{writer_.get('turn_p50_s', float('nan')):.3f} s, p99 {writer_.get('turn_p99_s', float('nan')):.3f} s, "
            f"lock waits included); {busy['turns_committed_while_searching']} of them while this process searched "
            f"({busy['search_seconds']} s), at most {busy['max_turns_committed_during_one_search']} during one search.",
            *([f"First errors: {busy['errors']}"] if busy["errors"] else []),
        ]
    )


if __name__ == "__main__":
    # the writer process: DATA_DIR DATA FIRST COUNT LOG [CONFIG [CONVERSATION]]
    writer(
        sys.argv[1],
        sys.argv[2],
        int(sys.argv[3]),
        int(sys.argv[4]),
        sys.argv[5],
        sys.argv[6] if len(sys.argv) > 6 else "",
        sys.argv[7] if len(sys.argv) > 7 else "",
    )
