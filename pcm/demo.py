"""The specification's walkthrough as a runnable scenario (processing-flow document, §4).

A Python/FastAPI backend developer writes an API (expected: maintenance), starts
learning Transformers (profiling), quits programming for full-time AI research
(correction), and gets an AI paper accepted (maintenance). The run ends with a
retrieval about the user's work.
"""

from __future__ import annotations

from pcm.api import PCM
from pcm.models import SHOWN_TYPES

SCENARIOS: dict[str, dict] = {
    "en": {
        "turns": [
            ("I'm a Python backend developer, and I build all our services with FastAPI.", None),
            ("Today I wrote a new REST API endpoint with FastAPI.", "low"),
            ("Lately I've been learning about Transformers and the attention mechanism.", "medium"),
            ("I've decided to quit programming and become a full-time AI researcher.", "high"),
            ("My AI research paper just got accepted at a top conference!", "low"),
        ],
        "query": "What does the user do for work?",
    },
    "zh": {
        "turns": [
            ("我是一名 Python 后端开发者，主要用 FastAPI 框架。", None),
            ("我今天用 FastAPI 写了一个 REST API", "low"),
            ("我最近在学习 Transformer 和注意力机制", "medium"),
            ("我决定放弃编程，全职转做 AI 研究员", "high"),
            ("我的 AI 论文被顶会接收了！", "low"),
        ],
        "query": "用户现在做什么工作？",
    },
}


def run_demo(pcm: PCM, user_id: str = "demo-user", lang: str = "en") -> dict:
    """Run the walkthrough; returns the per-turn trace, the final memory and the closing retrieval."""
    if lang not in SCENARIOS:
        raise ValueError(f"unknown demo language {lang!r}; choose one of {sorted(SCENARIOS)}")
    scenario = SCENARIOS[lang]
    turns = []
    for text, expected in scenario["turns"]:
        out = pcm.process(text, user_id=user_id, thread_id="demo")
        packet = out["surprisal"]
        turns.append(
            {
                "input": text,
                "expected_level": expected,
                "s_raw": packet["s_raw"],
                "retrieval_entropy": packet["retrieval_entropy"],
                "s_eff": packet["s_eff"],
                "level": packet["level"],
                "level_source": packet["level_source"],
                "level_probabilities": packet["level_probabilities"],
                "agent": out["agent"],
                "intent": out["intent"]["label"],
                "changes": [
                    {k: c[k] for k in ("node_id", "content", "old_weight", "new_weight", "reason")}
                    for c in out["changes"]
                ],
            }
        )
    memory = pcm.memory(user_id)
    nodes = sorted(memory.nodes(types=SHOWN_TYPES), key=lambda n: (n.created_at, n.id))
    return {
        "turns": turns,
        "memory": [
            {"id": n.id, "content": n.content, "type": n.type.value, "domain": n.domain, "weight": n.weight}
            for n in nodes
        ],
        "query": scenario["query"],
        "retrieval": [
            {"id": m.id, "content": m.content, "type": m.type.value, "weight": m.weight, "score": m.score}
            for m in pcm.search(scenario["query"], user_id=user_id, top_k=5)
        ],
    }
