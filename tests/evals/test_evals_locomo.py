"""The LoCoMo harness on a slice of one conversation (fast), including the fake-LLM QA path."""

import json
import re
from types import SimpleNamespace

import pytest
from comparison import numbers_within
from typer.testing import CliRunner

from evals.__main__ import app
from evals.bench.locomo import KS, PCM_VARIANTS, REINGESTED_VARIANTS, ROUTING_OFF, routing_figures, run_locomo, user_of
from evals.provenance import fitted_conversations
from pcm.config import load_context
from pcm.datasets.locomo import load_locomo
from pcm.services import Services

DATA = "../shared/datasets/locomo"
TURNS = 24


@pytest.fixture(scope="module")
def two_conversations():
    return load_locomo(DATA)[:2]


@pytest.fixture(scope="module")
def one_process_run(two_conversations, tmp_path_factory):
    """One process's run over both conversations' first TURNS turns (shared: it is the slow part)."""
    return run_locomo(
        two_conversations, load_context(data_dir=str(tmp_path_factory.mktemp("one"))), progress=False, limit_turns=TURNS
    )


def test_retrieval_run_scores_every_system_on_the_same_questions(one_process_run, two_conversations):
    results = one_process_run
    expected = {*PCM_VARIANTS, *REINGESTED_VARIANTS, "bm25", "dense", "hybrid"}
    assert set(results["systems"]) == expected
    assert results["questions"] > 0
    for name, metrics in results["systems"].items():
        assert metrics["count"] == results["questions"], name
        assert 0.0 <= metrics["recall@1"] <= metrics["recall@5"] <= metrics["recall@10"] <= metrics["recall@20"] <= 1.0
        assert 0.0 <= metrics["ndcg@10"] <= 1.0 and metrics["per_category"]
    assert set(results["versus_pcm"]) == expected - {"pcm"}
    for name, by_metric in results["versus_pcm"].items():
        gap = by_metric["recall@10"]
        assert gap["difference"] == pytest.approx(
            results["systems"][name]["recall@10"] - results["systems"]["pcm"]["recall@10"]
        )
        assert gap["ci95"][0] <= gap["difference"] <= gap["ci95"][1] and gap["questions"] == results["questions"]
        asked = [item["inputs"]["conversation"] for item in results["items"]]
        assert set(gap["per_group"]) == set(asked) == {c.sample_id for c in two_conversations}
        weighted = sum(gap["per_group"][c] * asked.count(c) for c in gap["per_group"]) / len(asked)
        assert weighted == pytest.approx(gap["difference"])  # per conversation, the same questions
    assert results["cost"]["turns"] == 2 * TURNS
    assert results["cost"]["latency_p50"] > 0 and results["cost"]["llm_calls_per_turn"] == 0
    assert set(results["cost"]["memories"]) == {c.sample_id for c in two_conversations}
    assert "skipped" in results["qa"]
    # the conversations the shipped router was fitted on, as its file records them, and routing over the others
    calibration = load_context().calibration_path
    fitted = fitted_conversations(calibration)
    assert results["fitted_conversations"] == {"calibration": str(calibration), "conversations": fitted}
    ids = [c.sample_id for c in two_conversations]
    assert [c for c in ids if results["per_conversation"][c]["fitted_on"]] == [c for c in ids if c in fitted]
    everything, unseen = results["routing"]["all"], results["routing"]["not_fitted_on"]
    assert everything["conversations"] == ids and unseen["conversations"] == [c for c in ids if c not in fitted]
    assert everything["turns"] == results["cost"]["turns"] and everything["questions"] == results["questions"]
    assert everything["correction_turns"] == results["cost"]["agents"].get("correction", 0)
    assert everything["correction_share"] == everything["correction_turns"] / everything["turns"]
    for k in KS:
        for name in ("pcm", ROUTING_OFF):
            assert everything["recall"][name][f"recall@{k}"] == pytest.approx(results["systems"][name][f"recall@{k}"])
        assert everything["pcm_minus_routing_off"][f"recall@{k}"]["difference"] == pytest.approx(
            -results["versus_pcm"][ROUTING_OFF][f"recall@{k}"]["difference"]
        )


def test_a_run_on_two_processes_gives_the_figures_of_one_process(tmp_path, two_conversations, one_process_run):
    """`--workers 2` scores the conversations in two processes. Every question's figures, the
    per-question items (ids included), the turns routed to each agent and the memories written
    must be the one process's; the rankings come from embeddings batched alike, so equal to 1e-6."""
    ctx = load_context(data_dir=str(tmp_path))
    one = one_process_run
    two = run_locomo(two_conversations, ctx, progress=False, limit_turns=TURNS, workers=2)
    assert (one["settings"]["workers"], two["settings"]["workers"]) == (1, 2)
    assert [item["id"] for item in two["items"]] == [item["id"] for item in one["items"]]
    assert numbers_within(two["items"], one["items"], 1e-6)
    for name, metrics in one["systems"].items():
        assert numbers_within(
            {k: v for k, v in two["systems"][name].items() if k != "seconds"},
            {k: v for k, v in metrics.items() if k != "seconds"},
            1e-6,
        ), name
    assert numbers_within(two["versus_pcm"], one["versus_pcm"], 1e-6)
    for key in ("turns", "memories", "agents", "llm_calls_per_turn"):
        assert two["cost"][key] == one["cost"][key], key
    assert not list(tmp_path.iterdir())  # both ran in temporary directories
    with pytest.raises(ValueError, match="one process"):
        run_locomo(two_conversations, ctx, Services(ctx, chat_model=object()), progress=False, limit_turns=4, workers=2)


def test_one_conversation_never_answers_another(tmp_path, two_conversations):
    from langgraph.checkpoint.memory import InMemorySaver

    from evals.bench.locomo import ingest
    from pcm.api import PCM

    pcm = PCM(load_context(data_dir=str(tmp_path)), checkpointer=InMemorySaver())
    first, second = two_conversations
    assert {first.speaker_a, first.speaker_b}.isdisjoint({second.speaker_a, second.speaker_b})
    ingest(pcm, first, progress=False, limit_turns=10)
    ingest(pcm, second, progress=False, limit_turns=10)
    found = [m for q in first.qa[:10] for m in pcm.search(q.question, user_id=user_of(first), top_k=20)]
    assert found
    assert {m.speaker for m in found} <= {first.speaker_a, first.speaker_b}


def test_qa_path_with_a_fake_llm(tmp_path, two_conversations, scripted_model):
    ctx = load_context(data_dir=str(tmp_path), router="off")
    services = Services(ctx, chat_model=scripted_model)
    results = run_locomo(two_conversations[:1], ctx, services, progress=False, limit_turns=12)
    qa = results["qa"]
    assert "skipped" not in qa and qa["count"] > 0
    assert set(qa) >= {"exact_match", "token_f1", "contains_match", "numeric_match", "llm_judge", "per_category"}
    answered = [c for c in qa["per_category"] if c != 5]
    assert answered and all(qa["per_category"][c]["llm_judge"] == 1.0 for c in answered)
    assert all(qa["per_category"][c]["abstained"] == 1.0 for c in answered)
    if 5 in qa["per_category"]:
        assert qa["per_category"][5]["exact_match"] == 1.0 and "llm_judge" not in qa["per_category"][5]
    assert scripted_model.calls.count("judge") == sum(qa["per_category"][c]["count"] for c in answered)
    assert results["cost"]["llm_calls_per_turn"] > 0 and results["cost"]["llm_tokens_per_turn"] >= 0


def test_cli_writes_results_report_and_plot(tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["locomo", "--data", f"{DATA}/conv-30.json", "--out", str(out), "--retrieval-only", "--limit-turns", "16"]
    )
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())
    assert results["conversations"] == ["conv-30"] and results["data"].endswith("conv-30.json")
    assert (out / "recall_at_k.png").stat().st_size > 5000
    report = (out / "report.md").read_text()
    assert re.search(r"\| pcm \| [0-9.]+ \|", report)
    assert re.search(r"\| bm25 \| [+-][0-9.]+ \[[+-][0-9.]+, [+-][0-9.]+\] [0-9]+/[0-9]+ \|", report)
    assert re.search(r"\| bm25 \| [+-][0-9.]+ \| [0-9] / [0-9] \|", report)  # per conversation
    seen = "yes" if "conv-30" in results["fitted_conversations"]["conversations"] else "no"
    assert re.search(rf"\| conv-30 \| {seen} \| 16 \| [0-9]+ \([0-9.]+\) \| [0-9]+ \|", report)
    assert re.search(
        r"\| all \(conv-30\) \| 16 \| [0-9]+ \([0-9.]+\) \| [0-9]+ of 16 \([0-9.]+\) \| [0-9]+ \| "
        r"[0-9.]+ \| [0-9.]+ \| "
        r"[+-][0-9.]+ \[[+-][0-9.]+, [+-][0-9.]+\] [0-9]+/[0-9]+ \|",
        report,
    )
    assert "| no model fitted on them (" in report
    analysis = CliRunner().invoke(app, ["analyze", str(out)])
    assert analysis.exit_code == 0 and "R@10" in analysis.output


def test_routing_is_reported_over_all_conversations_and_over_those_no_shipped_model_saw(tmp_path):
    """Conversation "b" is marked as fitted on because the calibration file records it; the correction
    share and routing on/off are given over all three conversations and over "a" and "c" alone."""
    calibration = tmp_path / "calibration.json"
    calibration.write_text(json.dumps({"chat_turns": {"count": 7, "conversations": ["b", "elsewhere"]}}))
    conversations = [SimpleNamespace(sample_id=c) for c in ("a", "b", "c")]
    parts = [
        {"cost": {"turns": turns, "agents": agents, "corrected_at": corrected_at}}
        for turns, agents, corrected_at in (
            (10, {"correction": 1, "maintenance": 9}, [3]),
            (150, {"correction": 10, "profiling": 140}, [0, 50, 99, 100, 101, 102, 103, 104, 120, 149]),
            (10, {}, []),
        )
    ]
    asked_in = ["a", "a", "b", "c"]

    def rows(recalls):
        return [{"category": 1, **{f"recall@{k}": r for k in KS}} for r in recalls]

    system_rows = {"pcm": rows([1.0, 0.0, 0.0, 1.0]), ROUTING_OFF: rows([0.0, 0.0, 1.0, 1.0])}

    figures = routing_figures(conversations, parts, system_rows, asked_in, calibration)
    assert figures["fitted_conversations"] == {"calibration": str(calibration), "conversations": ["b", "elsewhere"]}
    first = {"a": (10, 1), "b": (100, 3), "c": (10, 0)}  # each one's first 100 turns, and corrections there
    assert figures["per_conversation"] == {
        c: {
            "fitted_on": c == "b",
            "turns": part["cost"]["turns"],
            "correction_turns": part["cost"]["agents"].get("correction", 0),
            "first_turns": first[c][0],
            "first_turns_corrected": first[c][1],
            "corrected_at": part["cost"]["corrected_at"],
            "questions": asked_in.count(c),
        }
        for c, part in zip(("a", "b", "c"), parts)
    }
    everything, unseen = figures["routing"]["all"], figures["routing"]["not_fitted_on"]
    assert figures["routing"]["routing_off_system"] == ROUTING_OFF
    assert (everything["conversations"], everything["turns"], everything["correction_turns"]) == (
        ["a", "b", "c"],
        170,
        11,
    )
    assert (unseen["conversations"], unseen["turns"], unseen["correction_turns"]) == (["a", "c"], 20, 1)
    assert everything["correction_share"] == 11 / 170 and unseen["correction_share"] == 1 / 20
    assert (everything["first_turns"], everything["first_turns_corrected"]) == (120, 4)
    assert everything["first_turns_correction_share"] == 4 / 120 and unseen["first_turns_correction_share"] == 1 / 20
    assert everything["recall"] == {
        "pcm": {f"recall@{k}": 0.5 for k in KS},
        ROUTING_OFF: {f"recall@{k}": 0.5 for k in KS},
    }
    assert unseen["recall"] == {
        "pcm": {f"recall@{k}": 2 / 3 for k in KS},
        ROUTING_OFF: {f"recall@{k}": 1 / 3 for k in KS},
    }
    lead = unseen["pcm_minus_routing_off"]["recall@10"]
    assert (lead["questions"], lead["better"], lead["worse"]) == (3, 1, 0) and lead["difference"] == pytest.approx(
        1 / 3
    )
    assert everything["pcm_minus_routing_off"]["recall@10"]["difference"] == 0.0

    # a calibration that records no conversation (or no calibration file): nothing is marked
    no_record = tmp_path / "no-record.json"
    no_record.write_text(json.dumps({"thresholds": {}}))
    for path in (no_record, tmp_path / "absent.json"):
        figures = routing_figures(conversations, parts, system_rows, asked_in, path)
        assert figures["fitted_conversations"]["conversations"] == []
        assert figures["routing"]["not_fitted_on"] == figures["routing"]["all"]


def test_missing_data_says_how_to_get_it(tmp_path):
    result = CliRunner().invoke(app, ["locomo", "--data", str(tmp_path / "nothing"), "--out", str(tmp_path / "o")])
    assert result.exit_code != 0
    assert "locomo10.json" in str(result.exception) + result.output
