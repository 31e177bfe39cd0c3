"""The LLM-mode benchmark's plumbing on a few turns, against a scripted endpoint on loopback."""

import json

from fault_server import FaultServer

from evals.bench.llm_bench import bench_report, run_llm_bench
from pcm.config import load_context

DATA = "../shared/datasets/locomo/conv-26.json"


def scripted(request: dict) -> str:
    system = request["messages"][0]["content"]
    if "Classify the user's message" in system:
        return json.dumps({"distribution": {"Casual": 0.5, "Personal": 0.2, "art": 0.3}})
    if "Decide how the new message relates" in system:
        return 'Here you go: {"relation": "novel", "conflict_score": 0.1}'
    if "testable hypothesis" in system:
        return "not json at all"
    if "Extract the atomic facts" in system:
        return '```json\n{"facts": [{"turn": 1, "fact": "Caroline went to a support group."}]}\n```'
    return "A plain reply."


def test_bench_counts_calls_tokens_and_invalid_replies_per_turn(tmp_path):
    with FaultServer() as server:
        server.replies["ok"] = scripted
        ctx = load_context(
            data_dir=str(tmp_path), llm_model="scripted", llm_base_url=server.url("ok"), llm_intent_confidence=1.0
        )
        results = run_llm_bench(DATA, ctx, limit_turns=8, progress=False)
        requests = server.count("ok")
        hypotheses = sum(1 for _, _, r in server.requests if "testable hypothesis" in r["messages"][0]["content"])
    llm = results["llm"]
    assert results["turns"] == 8 and llm["calls"] == requests >= 8  # at least the intent of every turn
    assert llm["calls_per_turn"] == requests / 8
    assert llm["input_tokens_per_turn"] == 11 * requests / 8  # the server's usage figures
    assert llm["invalid_replies"] == hypotheses  # the only replies that fail validation
    assert llm["validation_failure_share"] == hypotheses / requests and llm["replies"] == requests
    assert results["llm_mode"]["memories_with_topics"] >= 1 and results["offline"]["memories_with_topics"] == 0
    assert results["latency_offline"]["p50"] > 0 and results["latency_llm_mode"]["p50"] > 0
    assert "LLM calls per ingested turn" in bench_report(results)
