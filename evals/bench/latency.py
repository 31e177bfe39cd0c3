"""Per-turn latency of the offline pipeline over one LoCoMo conversation, models already loaded."""

from __future__ import annotations

import platform
import tempfile
import time

import numpy as np
from tqdm import tqdm

from pcm.api import PCM
from pcm.config import PCMContext
from pcm.datasets.locomo import load_locomo
from pcm.services import Services


def measure_latency(
    data: str, ctx: PCMContext, conversation: str | None = None, limit_turns: int | None = None, progress: bool = True
) -> dict:
    """Wall time of `PCM.process` per turn (SQLite checkpointer, fresh data dir), with percentiles; then
    of `PCM.search` (top 10, intent mask on) for the conversation's questions over the memory it built."""
    conversations = load_locomo(data)
    chosen = next((c for c in conversations if c.sample_id == conversation), None) if conversation else conversations[0]
    if chosen is None:
        raise ValueError(f"no conversation {conversation!r} in {data}")
    with tempfile.TemporaryDirectory(prefix="pcm-latency-") as folder:
        ctx = ctx.replace(data_dir=folder)
        services = Services(ctx)
        load_started = time.perf_counter()
        services.warm_up()
        load_seconds = time.perf_counter() - load_started
        pcm = PCM(ctx, services)
        turns = [(s, t) for s in chosen.sessions for t in s.turns][:limit_turns]
        timings, levels = [], {}
        lm_calls, lm_seconds = services.language_model.calls, services.language_model.seconds
        for session, turn in tqdm(turns, desc=f"latency {chosen.sample_id}", disable=not progress):
            started = time.perf_counter()
            out = pcm.process(
                turn.full_text,
                user_id=chosen.sample_id,
                speaker=turn.speaker,
                timestamp=session.timestamp.isoformat() if session.timestamp else None,
                dialog_ids=[turn.dia_id],
            )
            timings.append(time.perf_counter() - started)
            levels[out["agent"]] = levels.get(out["agent"], 0) + 1
        pcm.flush(chosen.sample_id)
        questions = [q.question for q in chosen.qa][:200]
        searches = []
        for question in questions:
            started = time.perf_counter()
            pcm.search(question, user_id=chosen.sample_id, top_k=10)
            searches.append(time.perf_counter() - started)
        seconds = np.asarray(timings)
        lm_share = (services.language_model.seconds - lm_seconds) / max(seconds.sum(), 1e-9)
        return {
            "data": str(data),
            "conversation": chosen.sample_id,
            "turns": len(timings),
            "machine": f"{platform.machine()} {platform.processor() or ''} cpus={__import__('os').cpu_count()}".strip(),
            "model_load_seconds": round(load_seconds, 2),
            "p50": float(np.percentile(seconds, 50)),
            "p90": float(np.percentile(seconds, 90)),
            "p95": float(np.percentile(seconds, 95)),
            "p99": float(np.percentile(seconds, 99)),
            "mean": float(seconds.mean()),
            "total_seconds": float(seconds.sum()),
            "surprise_model_share": float(lm_share),
            "surprise_model_calls": services.language_model.calls - lm_calls,
            "memories": pcm.memory(chosen.sample_id).retrievable_count(),
            "agents": levels,
            "search": {
                "queries": len(searches),
                "p50": float(np.percentile(searches, 50)) if searches else None,
                "p95": float(np.percentile(searches, 95)) if searches else None,
            },
        }
