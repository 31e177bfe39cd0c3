"""LLM mode's cost and failure figures on one LoCoMo conversation (`make bench-llm`).

Ingests the conversation turn by turn in LLM mode (no replies: an ingested conversation
needs none) against an OpenAI-compatible endpoint — by default the local SmolLM2-135M
served by `transformers serve` (`pcm.llm_server`), started and stopped here — and
reports LLM calls and tokens per ingested turn (every attempt counted, failed ones too),
the share of replies that failed validation, failures and skipped requests, and per-turn
latency; the same turns ingested offline, in the same process, give the latency baseline.
A 135M model says nothing about answer quality; run `python -m evals locomo` with a
capable endpoint configured for that.
"""

from __future__ import annotations

import platform
import tempfile
import time
from contextlib import ExitStack
from datetime import datetime, timezone

import numpy as np
from langgraph.checkpoint.memory import InMemorySaver

from evals.bench.locomo import ingest, user_of
from pcm.api import PCM
from pcm.config import PCMContext
from pcm.datasets.locomo import Conversation, load_locomo
from pcm.services import Services


def _percentiles(seconds: list[float]) -> dict[str, float]:
    values = np.asarray(seconds or [0.0])
    return {
        "p50": float(np.percentile(values, 50)),
        "p90": float(np.percentile(values, 90)),
        "p95": float(np.percentile(values, 95)),
        "mean": float(values.mean()),
    }


def _ingest(pcm: PCM, conversation: Conversation, limit_turns: int | None, progress: bool) -> dict:
    """`evals.bench.locomo.ingest`, plus how many memories carry LLM-named topics beside the domains."""
    figures = ingest(pcm, conversation, progress, limit_turns)
    domains = set(pcm.ctx.domains)
    figures["memories_with_topics"] = sum(
        1 for n in pcm.memory(user_of(conversation)).nodes() if set(n.domain_distribution or {}) - domains
    )
    return figures


def run_llm_bench(
    data: str,
    ctx: PCMContext,
    conversation: str | None = None,
    limit_turns: int | None = None,
    progress: bool = True,
    cache_dir: str | None = None,
) -> dict:
    """See the module docstring. Without `ctx.llm_model`, the local SmolLM2 server is started."""
    from pcm.llm_server import LocalLLMServer
    from pcm.model_files import model_cache, prepare_model

    conversations = load_locomo(data)
    chosen = next((c for c in conversations if c.sample_id == conversation), None) if conversation else conversations[0]
    if chosen is None:
        raise ValueError(f"no conversation {conversation!r} in {data}")
    turns = chosen.turns[:limit_turns]
    started_all = time.perf_counter()
    with ExitStack() as stack:
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="pcm-llm-bench-"))
        endpoint = "configured endpoint"
        if not ctx.llm_model:
            model_dir = prepare_model(cache_dir or model_cache(ctx.model_cache))
            server = stack.enter_context(LocalLLMServer(model_dir, log_path=f"{folder}/serve.log"))
            ctx = ctx.replace(**server.settings())
            endpoint = f"local transformers serve, {model_dir.name}"
        llm_ctx = ctx.replace(data_dir=f"{folder}/llm", llm_reply=False)
        offline_ctx = ctx.replace(data_dir=f"{folder}/offline", llm_model="", llm_base_url="")
        services = Services(llm_ctx)
        services.warm_up()
        offline = _ingest(
            PCM(offline_ctx, services.with_context(offline_ctx), checkpointer=InMemorySaver()),
            chosen,
            limit_turns,
            progress,
        )
        llm = _ingest(PCM(llm_ctx, services, checkpointer=InMemorySaver()), chosen, limit_turns, progress)
    usage = services.llm.usage
    replies = usage.calls - (usage.failures - usage.invalid)
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {__import__('os').cpu_count()} CPUs, Python {platform.python_version()}",
        "data": str(data),
        "conversation": chosen.sample_id,
        "turns": len(turns),
        "endpoint": endpoint,
        "model": llm_ctx.llm_model,
        "settings": {
            name: getattr(llm_ctx, name)
            for name in (
                "llm_turn_deadline",
                "llm_timeout",
                "llm_max_retries",
                "llm_intent_confidence",
                "llm_topics",
                "llm_fact_batch",
                "router",
                "scorer",
            )
        },
        "llm": {
            "calls": usage.calls,
            "calls_per_turn": usage.calls / max(1, len(turns)),
            "input_tokens_per_turn": usage.input_tokens / max(1, len(turns)),
            "output_tokens_per_turn": usage.output_tokens / max(1, len(turns)),
            "replies": replies,
            "invalid_replies": usage.invalid,
            "validation_failure_share": usage.invalid / max(1, replies),
            "failed_calls": usage.failures - usage.invalid,
            "skipped_requests": usage.skipped,
        },
        "latency_llm_mode": _percentiles(llm.pop("latencies")),
        "latency_offline": _percentiles(offline.pop("latencies")),
        "llm_mode": llm,
        "offline": offline,
        "wall_seconds": round(time.perf_counter() - started_all, 1),
    }


def bench_report(results: dict) -> str:
    llm, on, off = results["llm"], results["latency_llm_mode"], results["latency_offline"]
    return (
        "\n".join(
            [
                f"# LLM mode: {results['conversation']} ({results['turns']} turns), {results['endpoint']}",
                "",
                f"{results['date']}, {results['machine']}; model `{results['model']}`; "
                f"wall time {results['wall_seconds']} s",
                "",
                "| figure | value |",
                "|---|---|",
                f"| LLM calls per ingested turn (every attempt) | {llm['calls_per_turn']:.3f} ({llm['calls']} calls) |",
                f"| input / output tokens per turn | {llm['input_tokens_per_turn']:.1f} / "
                f"{llm['output_tokens_per_turn']:.1f} |",
                f"| replies that failed validation | {llm['validation_failure_share']:.1%} "
                f"({llm['invalid_replies']} of {llm['replies']}) |",
                f"| failed calls (transport) / skipped requests | {llm['failed_calls']} / {llm['skipped_requests']} |",
                f"| per-turn latency, LLM mode: p50 / p90 / p95 / mean | {on['p50']:.3f} / {on['p90']:.3f} / "
                f"{on['p95']:.3f} / {on['mean']:.3f} s |",
                f"| per-turn latency, offline (same turns): p50 / p90 / p95 / mean | {off['p50']:.3f} / "
                f"{off['p90']:.3f} / {off['p95']:.3f} / {off['mean']:.3f} s |",
                f"| branches (LLM mode) | {results['llm_mode']['agents']} |",
                "| memories whose domain distribution has LLM-named topics | "
                f"{results['llm_mode']['memories_with_topics']} of {results['llm_mode']['memories']} |",
                "",
                f"Settings: {results['settings']}",
            ]
        )
        + "\n"
    )
