"""LoCoMo: replay each conversation through the PCM graph, then score retrieval (and QA with an LLM).

One run scores every system over the same turns and questions: PCM and its ablations
(no intent mask, no confidence weights, no graph expansion — same ingested memory —
and, each from its own ingestion, no surprise routing, with every turn sent to maintenance,
and no informativeness prior, with every stated fact starting at its branch's weight), and
the baselines BM25, dense MiniLM and their reciprocal-rank fusion over the raw turns.
Each conversation has its own user namespace, so one conversation's memory never
answers another's questions.
"""

from __future__ import annotations

import logging
import platform
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone

import numpy as np
from langgraph.checkpoint.memory import InMemorySaver
from tqdm import tqdm

from evals.baselines import BM25Retriever, DenseRetriever, HybridRetriever, turn_documents
from evals.judge import judge_answer
from evals.metrics import aggregate, answer_scores, ndcg_at_k, paired_difference, recall_at_k, session_hit_at_k
from evals.scenarios import SEARCH_ABLATIONS
from pcm.api import PCM
from pcm.config import PCMContext
from pcm.datasets.locomo import ADVERSARIAL_CATEGORY, Conversation, QAItem, Turn
from pcm.services import Services

logger = logging.getLogger(__name__)
KS = (1, 5, 10, 20)
THREAD = "conversation"
PCM_VARIANTS = {"pcm": {}, **{f"pcm-{name}": options for name, options in SEARCH_ABLATIONS.items()}}
#: the ablations that change what is written, so each ingests the conversation again: settings
#: replacing the shipped ones
REINGESTED_VARIANTS = {"pcm-no-routing": {"router": "off"}, "pcm-no-informativeness": {"informativeness_exponent": 0.0}}
#: the ingestions whose turn latencies results.json's `cost` reports, and under which key
LATENCY_KEYS = {"pcm": "latencies", "pcm-no-routing": "no_routing_latencies"}
QA_MAX_TOKENS = 64
QA_SYSTEM = ("Answer the question about the conversation from the memories below, in a few words. "
             "Dates in brackets are when a memory was said. If the memories do not contain the answer, "
             "reply exactly: not mentioned.\n\nMemories:\n{memories}")


def user_of(conversation: Conversation) -> str:
    return f"locomo-{conversation.sample_id}"


def ingest(pcm: PCM, conversation: Conversation, progress: bool = True, limit_turns: int | None = None,
           on_turn: Callable[[Turn, dict], None] | None = None) -> dict:
    """Replay both speakers' turns in order (session times as timestamps); returns cost figures.
    `on_turn(turn, state)` sees each turn's final graph state."""
    user = user_of(conversation)
    turns = [(s, t) for s in conversation.sessions for t in s.turns][:limit_turns]
    latencies, agents, calls, tokens = [], {}, 0, 0
    for session, turn in tqdm(turns, desc=f"ingest {conversation.sample_id}", disable=not progress, leave=False):
        started = time.perf_counter()
        out = pcm.process(turn.full_text, user_id=user, thread_id=THREAD, speaker=turn.speaker,
                          timestamp=session.timestamp.isoformat() if session.timestamp else None,
                          dialog_ids=[turn.dia_id])
        latencies.append(time.perf_counter() - started)
        if on_turn is not None:
            on_turn(turn, out)
        agents[out["agent"]] = agents.get(out["agent"], 0) + 1
        usage = out.get("llm_usage") or {}
        calls += usage.get("calls", 0)
        tokens += usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
    pcm.flush(user, THREAD)
    return {"turns": len(turns), "latencies": latencies, "agents": agents, "llm_calls": calls, "llm_tokens": tokens,
            "memories": len(pcm.memory(user))}


def answerable(conversation: Conversation, turn_ids: set[str]) -> list[QAItem]:
    """Questions of categories 1–4 whose evidence lies in the ingested turns."""
    return [q for q in conversation.qa if q.category != ADVERSARIAL_CATEGORY and q.evidence
            and set(q.evidence) <= turn_ids]


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


def run_locomo(conversations: list[Conversation], ctx: PCMContext, services: Services | None = None,
               progress: bool = True, limit_turns: int | None = None, answer_questions: bool = True,
               judge: bool = True) -> dict:
    """Score every system on every conversation; see the module docstring.

    `items` in the result holds PCM's per-question figures (for `analyze` and LangSmith);
    with an LLM, answers are scored by the four answer metrics and, with `judge`, by an
    LLM judge (Mem0's protocol, `evals.judge`).
    """
    started_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pcm-locomo-") as folder:
        ctx = ctx.replace(data_dir=folder, llm_reply=False)      # ingested turns need no replies
        services = Services(ctx) if services is None else services.with_context(ctx)
        services.warm_up()
        pcm = PCM(ctx, services, checkpointer=InMemorySaver())
        reingested = {name: PCM(ctx.replace(data_dir=f"{folder}/{name}", **settings),
                                services.with_context(ctx.replace(data_dir=f"{folder}/{name}", **settings)),
                                checkpointer=InMemorySaver())
                      for name, settings in REINGESTED_VARIANTS.items()}
        rows: dict[str, list[dict]] = {}
        seconds: dict[str, float] = {}
        cost: dict = {"latencies": [], "no_routing_latencies": [], "llm_calls": 0, "llm_tokens": 0, "turns": 0,
                      "memories": {}, "agents": {}}
        misses, qa_rows, items = [], [], []
        for conversation in conversations:
            for name, timed in _ingestions(pcm, reingested, conversation, progress, limit_turns, cost):
                seconds[name] = seconds.get(name, 0.0) + timed
            turn_ids = {t.dia_id for t in conversation.turns[:limit_turns]}
            questions = answerable(conversation, turn_ids)
            documents = [d for d in turn_documents(conversation) if set(d.dialog_ids) <= turn_ids]
            retrievers = _baselines(documents, services)
            systems: dict[str, Callable[[str], list[list[str]]]] = {
                name: _pcm_search(pcm, conversation, options) for name, options in PCM_VARIANTS.items()}
            systems.update((name, _pcm_search(system, conversation, {})) for name, system in reingested.items())
            for name, retriever in retrievers.items():
                systems[name] = _baseline_search(retriever)
            for name, search in systems.items():
                begun = time.perf_counter()
                for question in questions:
                    ranked = search(question.question)
                    row = score_ranking(ranked, question)
                    rows.setdefault(name, []).append(row)
                    if name == "pcm":
                        items.append({"id": f"{conversation.sample_id}:{len(items)}",
                                      "inputs": {"conversation": conversation.sample_id, "question": question.question},
                                      "reference": {"answer": question.answer, "evidence": question.evidence,
                                                    "category": question.category},
                                      "outputs": row})
                        if row["recall@10"] == 0:
                            misses.append(_miss(pcm, conversation, question))
                seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - begun
            if answer_questions and services.llm is not None:
                qa_rows.extend(_answer(pcm, services, conversation, turn_ids, judge))
    latencies = np.asarray(cost["latencies"] or [0.0])
    asked_in = [item["inputs"]["conversation"] for item in items]    # the conversation of each PCM row
    no_routing_latencies = np.asarray(cost["no_routing_latencies"] or [0.0])
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {__import__('os').cpu_count()} CPUs, Python {platform.python_version()}",
        "conversations": [c.sample_id for c in conversations],
        "questions": len(rows.get("pcm", [])),
        "settings": {"scorer": ctx.scorer, "router": ctx.router, "top_k_scored": max(KS),
                     "limit_turns": limit_turns},
        "systems": {name: summarise(r, seconds.get(name, 0.0)) for name, r in rows.items()},
        # each system against PCM on the same questions: is a gap more than these questions' noise?
        "versus_pcm": {name: {f"recall@{k}": paired_difference(r, rows["pcm"], f"recall@{k}", groups=asked_in)
                              for k in KS}
                       for name, r in rows.items() if name != "pcm" and "pcm" in rows},
        "cost": {
            "turns": cost["turns"], "llm_calls_per_turn": cost["llm_calls"] / max(1, cost["turns"]),
            "llm_tokens_per_turn": cost["llm_tokens"] / max(1, cost["turns"]),
            "latency_p50": float(np.percentile(latencies, 50)), "latency_p95": float(np.percentile(latencies, 95)),
            "no_routing_latency_p50": float(np.percentile(no_routing_latencies, 50)),
            "memories": cost["memories"], "agents": cost["agents"],
            "wall_seconds": round(time.perf_counter() - started_all, 1),
        },
        "qa": _qa_summary(qa_rows, services),
        "misses": misses[:25],
        "items": items,
    }


def _ingestions(pcm: PCM, reingested: dict[str, PCM], conversation: Conversation, progress: bool,
                limit_turns: int | None, cost: dict):
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
    return {"bm25": BM25Retriever(documents), "dense": DenseRetriever(documents, encoder=encoder),
            "hybrid": HybridRetriever(documents, encoder=encoder)}


def _baseline_search(retriever):
    def search(question: str) -> list[list[str]]:
        return [list(retriever.dialog_ids_of(doc_id)) for doc_id, _ in retriever.search(question, max(KS))]
    return search


def _miss(pcm: PCM, conversation: Conversation, question: QAItem) -> dict:
    found = pcm.search(question.question, user_id=user_of(conversation), top_k=3)
    evidence = {t.dia_id: t.full_text for t in conversation.turns if t.dia_id in set(question.evidence)}
    return {"conversation": conversation.sample_id, "question": question.question, "category": question.category,
            "evidence": evidence, "retrieved_instead": [f"{m.dialog_ids} {m.content[:160]}" for m in found]}


def _answer(pcm: PCM, services: Services, conversation: Conversation, turn_ids: set[str], judge: bool,
            limit: int | None = None) -> list[dict]:
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
        reply = services.llm.complete(QA_SYSTEM.format(memories="\n".join(lines)), question.question,
                                      max_tokens=QA_MAX_TOKENS) or ""
        row = {"category": question.category, **answer_scores(reply, question.answer, question.category)}
        if judge and question.category != ADVERSARIAL_CATEGORY:
            row["llm_judge"] = judge_answer(services.llm, question.question, question.answer, reply)
        rows.append(row)
    return rows


def _qa_summary(rows: list[dict], services: Services) -> dict:
    if services.llm is None:
        return {"skipped": "no LLM configured (set llm_model / PCM_LLM_MODEL and an API key); "
                           "retrieval metrics above need none"}
    if not rows:
        return {"skipped": "no questions answered"}
    summary = aggregate(rows)
    return {**summary["overall"], "per_category": summary["per_category"]}
