"""LoCoMo: replay each conversation through the PCM graph, then score retrieval (and QA with an LLM).

One run scores every system over the same turns and questions: PCM and its ablations
(no intent mask, no confidence weights, no graph expansion — same ingested memory —
and, each from its own ingestion, no surprise routing, with every turn sent to maintenance,
and no informativeness prior, with every stated fact starting at its branch's weight), and
the baselines BM25, dense MiniLM and their reciprocal-rank fusion over the raw turns.
Each conversation has its own user namespace, so one conversation's memory never
answers another's questions.

The shipped router was fitted with some LoCoMo conversations' turns as "low" examples (`make
calibrate --chat`, recorded in the calibration file): the results mark those conversations, and
give the share of turns routed to correction and PCM's recall against `pcm-no-routing` both over
all conversations and over those no shipped model saw (`routing_figures`).
"""

from __future__ import annotations

import logging
import platform
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from langgraph.checkpoint.memory import InMemorySaver
from tqdm import tqdm

from evals.bench.baselines import BM25Retriever, DenseRetriever, HybridRetriever, turn_documents
from evals.bench.judge import judge_answer
from evals.bench.metrics import aggregate, answer_scores, ndcg_at_k, paired_difference, recall_at_k, session_hit_at_k
from evals.bench.processes import refuse_given_chat_model, results_in_processes
from evals.bench.scenarios import SEARCH_ABLATIONS
from evals.provenance import fitted_conversations
from pcm.api import PCM
from pcm.config import PCMContext
from pcm.datasets.locomo import ADVERSARIAL_CATEGORY, Conversation, QAItem, Turn
from pcm.routing import BRANCH_OF_LEVEL
from pcm.services import Services

logger = logging.getLogger(__name__)
KS = (1, 5, 10, 20)
THREAD = "conversation"
#: the correction share is also reported over each conversation's first turns (a new user's)
FIRST_TURNS = 100
PCM_VARIANTS = {"pcm": {}, **{f"pcm-{name}": options for name, options in SEARCH_ABLATIONS.items()}}
#: the ablations that change what is written, so each ingests the conversation again: settings
#: replacing the shipped ones
REINGESTED_VARIANTS = {"pcm-no-routing": {"router": "off"}, "pcm-no-informativeness": {"informativeness_exponent": 0.0}}
#: the ingestions whose turn latencies results.json's `cost` reports, and under which key
LATENCY_KEYS = {"pcm": "latencies", "pcm-no-routing": "no_routing_latencies"}
#: the system PCM's routing is compared with: the same ingestion with every turn sent to maintenance
ROUTING_OFF = "pcm-no-routing"
QA_MAX_TOKENS = 64
QA_SYSTEM = (
    "Answer the question about the conversation from the memories below, in a few words. "
    "Dates in brackets are when a memory was said. If the memories do not contain the answer, "
    "reply exactly: not mentioned.\n\nMemories:\n{memories}"
)


def user_of(conversation: Conversation) -> str:
    return f"locomo-{conversation.sample_id}"


def ingest(
    pcm: PCM,
    conversation: Conversation,
    progress: bool = True,
    limit_turns: int | None = None,
    on_turn: Callable[[Turn, dict], None] | None = None,
) -> dict:
    """Replay both speakers' turns in order (session times as timestamps); returns cost figures.
    `on_turn(turn, state)` sees each turn's final graph state."""
    user = user_of(conversation)
    turns = [(s, t) for s in conversation.sessions for t in s.turns][:limit_turns]
    latencies, agents, calls, tokens, corrected_at = [], {}, 0, 0, []
    for session, turn in tqdm(turns, desc=f"ingest {conversation.sample_id}", disable=not progress, leave=False):
        started = time.perf_counter()
        out = pcm.process(
            turn.full_text,
            user_id=user,
            thread_id=THREAD,
            speaker=turn.speaker,
            timestamp=session.timestamp.isoformat() if session.timestamp else None,
            dialog_ids=[turn.dia_id],
        )
        latencies.append(time.perf_counter() - started)
        if on_turn is not None:
            on_turn(turn, out)
        agents[out["agent"]] = agents.get(out["agent"], 0) + 1
        if out["agent"] == BRANCH_OF_LEVEL["high"]:
            corrected_at.append(len(latencies) - 1)
        usage = out.get("llm_usage") or {}
        calls += usage.get("calls", 0)
        tokens += usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
    pcm.flush(user, THREAD)
    return {
        "turns": len(turns),
        "latencies": latencies,
        "agents": agents,
        "corrected_at": corrected_at,
        "llm_calls": calls,
        "llm_tokens": tokens,
        "memories": pcm.memory(user).retrievable_count(),
    }


def answerable(conversation: Conversation, turn_ids: set[str]) -> list[QAItem]:
    """Questions of categories 1–4 whose evidence lies in the ingested turns."""
    return [
        q for q in conversation.qa if q.category != ADVERSARIAL_CATEGORY and q.evidence and set(q.evidence) <= turn_ids
    ]


def score_ranking(ranked: list[list[str]], question: QAItem) -> dict:
    row: dict = {"category": question.category}
    for k in KS:
        row[f"recall@{k}"] = recall_at_k(ranked, question.evidence, k)
        row[f"session_hit@{k}"] = session_hit_at_k(ranked, question.evidence, k)
    row["ndcg@10"] = ndcg_at_k(ranked, question.evidence, 10)
    return row


def summarise(rows: list[dict], seconds: float) -> dict:
    summary = aggregate(rows)
    overall = dict(summary["overall"])
    overall["per_category"] = summary["per_category"]
    overall["seconds"] = round(seconds, 2)
    return overall


def run_locomo(
    conversations: list[Conversation],
    ctx: PCMContext,
    services: Services | None = None,
    progress: bool = True,
    limit_turns: int | None = None,
    answer_questions: bool = True,
    judge: bool = True,
    workers: int = 1,
) -> dict:
    """Score every system on every conversation; see the module docstring.

    `items` in the result holds PCM's per-question figures (for `analyze` and LangSmith);
    with an LLM, answers are scored by the four answer metrics and, with `judge`, by an
    LLM judge (Mem0's protocol, `evals.bench.judge`). With `workers` > 1 the conversations are
    scored in that many processes (`evals.bench.processes`), the longest first; each is its own
    user, so the figures are those of one process, merged in the conversations' order.
    """
    if workers < 1:
        raise ValueError("workers must be at least 1")
    started_all = time.perf_counter()
    ctx = ctx.replace(llm_reply=False)  # ingested turns need no replies
    services = Services(ctx) if services is None else services
    if workers > 1 and len(conversations) > 1:
        refuse_given_chat_model(services)
        longest_first = sorted(range(len(conversations)), key=lambda i: -len(conversations[i].turns))
        scored = results_in_processes(
            _score_in_worker,
            [(conversations[i], ctx, limit_turns, answer_questions, judge) for i in longest_first],
            workers,
            f"conversations ({workers} processes)",
            progress,
        )
        parts = [part for _, part in sorted(zip(longest_first, scored), key=lambda pair: pair[0])]
    else:
        with tempfile.TemporaryDirectory(prefix="pcm-locomo-") as folder:
            parts = [
                score_conversation(
                    conversation,
                    ctx.replace(data_dir=f"{folder}/{conversation.sample_id}"),
                    services,
                    progress,
                    limit_turns,
                    answer_questions,
                    judge,
                )
                for conversation in conversations
            ]
    rows: dict[str, list[dict]] = {}
    seconds: dict[str, float] = {}
    cost = _no_cost()
    misses, qa_rows, items = [], [], []
    for part in parts:
        for name, system_rows in part["rows"].items():
            rows.setdefault(name, []).extend(system_rows)
        for name, timed in part["seconds"].items():
            seconds[name] = seconds.get(name, 0.0) + timed
        for key in ("latencies", "no_routing_latencies"):
            cost[key].extend(part["cost"][key])
        for key in ("llm_calls", "llm_tokens", "turns"):
            cost[key] += part["cost"][key]
        cost["memories"].update(part["cost"]["memories"])
        for agent, count in part["cost"]["agents"].items():
            cost["agents"][agent] = cost["agents"].get(agent, 0) + count
        misses.extend(part["misses"])
        qa_rows.extend(part["qa_rows"])
        numbered = len(items)
        items.extend(
            {"id": f"{item['inputs']['conversation']}:{numbered + n}", **item} for n, item in enumerate(part["items"])
        )
    latencies = np.asarray(cost["latencies"] or [0.0])
    asked_in = [item["inputs"]["conversation"] for item in items]  # the conversation of each PCM row
    no_routing_latencies = np.asarray(cost["no_routing_latencies"] or [0.0])
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {__import__('os').cpu_count()} CPUs, Python {platform.python_version()}",
        "conversations": [c.sample_id for c in conversations],
        "questions": len(rows.get("pcm", [])),
        "settings": {
            "scorer": ctx.scorer,
            "router": ctx.router,
            "top_k_scored": max(KS),
            "limit_turns": limit_turns,
            "workers": workers,
        },
        "systems": {name: summarise(r, seconds.get(name, 0.0)) for name, r in rows.items()},
        # each system against PCM on the same questions: is a gap more than these questions' noise?
        "versus_pcm": {
            name: {f"recall@{k}": paired_difference(r, rows["pcm"], f"recall@{k}", groups=asked_in) for k in KS}
            for name, r in rows.items()
            if name != "pcm" and "pcm" in rows
        },
        "cost": {
            "turns": cost["turns"],
            "llm_calls_per_turn": cost["llm_calls"] / max(1, cost["turns"]),
            "llm_tokens_per_turn": cost["llm_tokens"] / max(1, cost["turns"]),
            "latency_p50": float(np.percentile(latencies, 50)),
            "latency_p95": float(np.percentile(latencies, 95)),
            "no_routing_latency_p50": float(np.percentile(no_routing_latencies, 50)),
            "memories": cost["memories"],
            "agents": cost["agents"],
            "wall_seconds": round(time.perf_counter() - started_all, 1),
        },
        "qa": _qa_summary(qa_rows, services),
        **routing_figures(conversations, parts, rows, asked_in, ctx.calibration_path),
        "misses": misses[:25],
        "items": items,
    }


def routing_figures(
    conversations: list[Conversation],
    parts: list[dict],
    rows: dict[str, list[dict]],
    asked_in: list[str],
    calibration: Path,
) -> dict:
    """`fitted_conversations`: the conversations the router in `calibration` was fitted on, as the
    file records them; `per_conversation`: whether each run one was, its turns, those routed to
    correction and its questions; `routing`: the correction share and recall of PCM against
    `ROUTING_OFF` over `all` conversations and over those `not_fitted_on` (`parts`: each
    conversation's `score_conversation`, in order; `rows` and `asked_in`: each system's rows and the
    conversation of each row, as merged)."""
    fitted = fitted_conversations(calibration)
    per_conversation = {
        c.sample_id: {
            "fitted_on": c.sample_id in fitted,
            "turns": part["cost"]["turns"],
            "correction_turns": part["cost"]["agents"].get(BRANCH_OF_LEVEL["high"], 0),
            "first_turns": min(FIRST_TURNS, part["cost"]["turns"]),
            "first_turns_corrected": sum(i < FIRST_TURNS for i in part["cost"].get("corrected_at", [])),
            "corrected_at": part["cost"].get("corrected_at", []),
            "questions": asked_in.count(c.sample_id),
        }
        for c, part in zip(conversations, parts)
    }
    unseen = [c for c, figures in per_conversation.items() if not figures["fitted_on"]]
    return {
        "fitted_conversations": {"calibration": str(calibration), "conversations": fitted},
        "per_conversation": per_conversation,
        "routing": {
            "routing_off_system": ROUTING_OFF,
            "all": _routing_over(list(per_conversation), per_conversation, rows, asked_in),
            "not_fitted_on": _routing_over(unseen, per_conversation, rows, asked_in),
        },
    }


def _routing_over(chosen: list[str], per_conversation: dict, rows: dict[str, list[dict]], asked_in: list[str]) -> dict:
    """The correction share of `chosen` conversations' turns, and recall@k of PCM and `ROUTING_OFF`
    on their questions with PCM's lead, question by question (`paired_difference`)."""
    kept = [i for i, conversation in enumerate(asked_in) if conversation in chosen]
    pcm_rows, off_rows = [rows["pcm"][i] for i in kept], [rows[ROUTING_OFF][i] for i in kept]
    turns = sum(per_conversation[c]["turns"] for c in chosen)
    corrected = sum(per_conversation[c]["correction_turns"] for c in chosen)
    first = sum(per_conversation[c]["first_turns"] for c in chosen)
    first_corrected = sum(per_conversation[c]["first_turns_corrected"] for c in chosen)
    recall = [f"recall@{k}" for k in KS]
    return {
        "conversations": chosen,
        "turns": turns,
        "correction_turns": corrected,
        "correction_share": corrected / turns if turns else None,
        # a new user's first turns, where the user's own level prior has not adapted yet
        "first_turns": first,
        "first_turns_corrected": first_corrected,
        "first_turns_correction_share": first_corrected / first if first else None,
        "questions": len(kept),
        "recall": {
            name: {k: aggregate(system_rows, metric_keys=recall)["overall"].get(k) for k in recall}
            for name, system_rows in (("pcm", pcm_rows), (ROUTING_OFF, off_rows))
        },
        "pcm_minus_routing_off": {k: paired_difference(pcm_rows, off_rows, k) for k in recall},
    }


def _no_cost() -> dict:
    """The cost figures of no turn yet (`_ingestions` adds each conversation's)."""
    return {
        "latencies": [],
        "no_routing_latencies": [],
        "llm_calls": 0,
        "llm_tokens": 0,
        "turns": 0,
        "memories": {},
        "agents": {},
    }


def score_conversation(
    conversation: Conversation,
    ctx: PCMContext,
    services: Services,
    progress: bool,
    limit_turns: int | None,
    answer_questions: bool,
    judge: bool,
) -> dict:
    """One conversation's share of `run_locomo`: its ingestions (PCM's and each re-ingested
    ablation's, in `ctx.data_dir`), every system's rows on its questions, its cost figures, PCM's
    misses and per-question items (numbered when merged), and its answers when an LLM is set."""
    services = services.with_context(ctx)  # the memory store lives in the services' data directory
    services.warm_up()  # models load once per process, before any turn is timed
    pcm = PCM(ctx, services, checkpointer=InMemorySaver())
    reingested = {
        name: PCM(
            ctx.replace(data_dir=f"{ctx.data_dir}/{name}", **settings),
            services.with_context(ctx.replace(data_dir=f"{ctx.data_dir}/{name}", **settings)),
            checkpointer=InMemorySaver(),
        )
        for name, settings in REINGESTED_VARIANTS.items()
    }
    rows: dict[str, list[dict]] = {}
    cost = _no_cost()
    seconds = dict(_ingestions(pcm, reingested, conversation, progress, limit_turns, cost))
    misses, items = [], []
    turn_ids = {t.dia_id for t in conversation.turns[:limit_turns]}
    questions = answerable(conversation, turn_ids)
    documents = [d for d in turn_documents(conversation) if set(d.dialog_ids) <= turn_ids]
    retrievers = _baselines(documents, services)
    systems: dict[str, Callable[[str], list[list[str]]]] = {
        name: _pcm_search(pcm, conversation, options) for name, options in PCM_VARIANTS.items()
    }
    systems.update((name, _pcm_search(system, conversation, {})) for name, system in reingested.items())
    for name, retriever in retrievers.items():
        systems[name] = _baseline_search(retriever)
    for name, search in systems.items():
        begun = time.perf_counter()
        for question in questions:
            row = score_ranking(search(question.question), question)
            rows.setdefault(name, []).append(row)
            if name == "pcm":
                items.append(
                    {
                        "inputs": {"conversation": conversation.sample_id, "question": question.question},
                        "reference": {
                            "answer": question.answer,
                            "evidence": question.evidence,
                            "category": question.category,
                        },
                        "outputs": row,
                    }
                )
                if row["recall@10"] == 0:
                    misses.append(_miss(pcm, conversation, question))
        seconds[name] = time.perf_counter() - begun
    qa_rows = (
        _answer(pcm, services, conversation, turn_ids, judge) if answer_questions and services.llm is not None else []
    )
    return {"rows": rows, "seconds": seconds, "cost": cost, "misses": misses, "qa_rows": qa_rows, "items": items}


def _score_in_worker(
    conversation: Conversation, ctx: PCMContext, limit_turns: int | None, answer_questions: bool, judge: bool
) -> dict:
    """`score_conversation` in a worker process, in a temporary data directory of its own."""
    with tempfile.TemporaryDirectory(prefix="pcm-locomo-") as folder:
        ctx = ctx.replace(data_dir=folder)
        return score_conversation(conversation, ctx, Services(ctx), False, limit_turns, answer_questions, judge)


def _ingestions(
    pcm: PCM,
    reingested: dict[str, PCM],
    conversation: Conversation,
    progress: bool,
    limit_turns: int | None,
    cost: dict,
):
    for name, system in (("pcm", pcm), *reingested.items()):
        begun = time.perf_counter()
        figures = ingest(system, conversation, progress, limit_turns)
        if name in LATENCY_KEYS:
            cost[LATENCY_KEYS[name]].extend(figures["latencies"])
        if system is pcm:
            cost["turns"] += figures["turns"]
            cost["llm_calls"] += figures["llm_calls"]
            cost["llm_tokens"] += figures["llm_tokens"]
            cost["memories"][conversation.sample_id] = figures["memories"]
            cost["corrected_at"] = figures["corrected_at"]
            for agent, count in figures["agents"].items():
                cost["agents"][agent] = cost["agents"].get(agent, 0) + count
        yield f"ingest:{name}", time.perf_counter() - begun


def _pcm_search(pcm: PCM, conversation: Conversation, options: dict):
    user = user_of(conversation)

    def search(question: str) -> list[list[str]]:
        return [m.dialog_ids for m in pcm.search(question, user_id=user, top_k=max(KS), **options)]

    return search


def _baselines(documents, services: Services) -> dict:
    encoder = services.embedder.model
    return {
        "bm25": BM25Retriever(documents),
        "dense": DenseRetriever(documents, encoder=encoder),
        "hybrid": HybridRetriever(documents, encoder=encoder),
    }


def _baseline_search(retriever):
    def search(question: str) -> list[list[str]]:
        return [list(retriever.dialog_ids_of(doc_id)) for doc_id, _ in retriever.search(question, max(KS))]

    return search


def _miss(pcm: PCM, conversation: Conversation, question: QAItem) -> dict:
    found = pcm.search(question.question, user_id=user_of(conversation), top_k=3)
    evidence = {t.dia_id: t.full_text for t in conversation.turns if t.dia_id in set(question.evidence)}
    return {
        "conversation": conversation.sample_id,
        "question": question.question,
        "category": question.category,
        "evidence": evidence,
        "retrieved_instead": [f"{m.dialog_ids} {m.content[:160]}" for m in found],
    }


def _answer(
    pcm: PCM, services: Services, conversation: Conversation, turn_ids: set[str], judge: bool, limit: int | None = None
) -> list[dict]:
    """Answer each question (the first `limit`) from PCM's top-10 memories with the configured LLM,
    and score it (adversarial questions on abstaining; the others also by the LLM judge when
    `judge`). An answer that fails validation counts as no answer."""
    rows = []
    for question in conversation.qa:
        if question.evidence and not set(question.evidence) <= turn_ids:
            continue
        if limit is not None and len(rows) >= limit:
            break
        memories = pcm.search(question.question, user_id=user_of(conversation), top_k=10)
        graph = pcm.memory(user_of(conversation))
        lines = []
        for m in memories:
            when = graph.node(m.id).source.session_time
            lines.append(f"[{when:%d %B %Y}] {m.content}" if when else m.content)
        reply = (
            services.llm.complete(
                QA_SYSTEM.format(memories="\n".join(lines)), question.question, max_tokens=QA_MAX_TOKENS
            )
            or ""
        )
        row = {"category": question.category, **answer_scores(reply, question.answer, question.category)}
        if judge and question.category != ADVERSARIAL_CATEGORY:
            row["llm_judge"] = judge_answer(services.llm, question.question, question.answer, reply)
        rows.append(row)
    return rows


def _qa_summary(rows: list[dict], services: Services) -> dict:
    if services.llm is None:
        return {
            "skipped": "no LLM configured (set llm_model / PCM_LLM_MODEL and an API key); "
            "retrieval metrics above need none"
        }
    if not rows:
        return {"skipped": "no questions answered"}
    summary = aggregate(rows)
    return {**summary["overall"], "per_category": summary["per_category"]}
