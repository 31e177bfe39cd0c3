"""Scenario metrics, threshold fitting and the rule that calibration is never scored on its own file."""

import json
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from comparison import numbers_within
from typer.testing import CliRunner

from evals.__main__ import app
from evals.bench.scenarios import (
    SEARCH_ABLATIONS,
    ScenarioRecord,
    _share,
    current_wins,
    load_scenarios,
    routing_metrics,
    standing_first,
    translated_queries,
)
from evals.fit.calibration import fit_router, fit_thresholds, predict_router, save_calibration
from evals.provenance import file_digest
from pcm.config import PCMContext
from pcm.evolution import stated_weight
from pcm.perception.surprise import FEATURES
from pcm.routing import RouterModel


def record(expected, level, lang="en", revision=None):
    return ScenarioRecord(
        id="x",
        lang=lang,
        expected=expected,
        level=level,
        level_source="threshold",
        s_raw=0.0,
        retrieval_entropy=0.0,
        s_eff=0.0,
        signals={},
        current_over_outdated=revision,
        dense_current_over_outdated=None,
        weights={},
        trajectory=[],
    )


def test_supersession_and_false_alarms_on_a_hand_computed_example():
    from evals.bench.scenarios import supersession_metrics

    right = record("high", "high", revision=True)
    right.outdated, right.superseded = "Lyon", ["I live in Lyon.", "I like my job."]
    wrong = record("high", "high", revision=False)
    wrong.outdated, wrong.superseded = "vegan", ["I cook a lot."]
    missed = record("high", "medium", revision=False)
    missed.outdated = "Python"
    trap = record("low", "high")
    trap.kind = "trap"
    right.history_corrected, right.history_turns, missed.history_turns = 1, 30, 10
    m = supersession_metrics([right, wrong, missed, trap, record("low", "low")])
    assert m["history_turns_corrected"] == 1 and m["history_correction_share"] == pytest.approx(1 / 40)
    assert m["supersession_hit_rate"] == pytest.approx(1 / 2)  # 1 of the 2 corrected probes
    assert m["supersession_precision"] == pytest.approx(1 / 3)  # 1 of the 3 superseded memories
    assert m["false_alarms_low"] == pytest.approx(1 / 2) and m["false_alarms_trap"] == 1.0


def test_routing_metrics_on_a_hand_computed_example():
    records = [
        record("low", "low"),
        record("low", "medium"),
        record("medium", "medium", "zh"),
        record("high", "high", revision=True),
        record("high", "low", revision=False),
    ]
    records[3].current_over_outdated_ablated = {"no-intent": True, "no-weights": True, "no-expansion": False}
    records[4].current_over_outdated_ablated = {"no-intent": False, "no-weights": True, "no-expansion": False}
    records[0].standing_first_ablated = {"no-intent": False, "no-weights": True}
    records[1].standing_first_ablated = {"no-intent": True, "no-weights": True}
    m = routing_metrics(records)
    assert m["current_over_outdated_ablated"] == {"no-intent": 0.5, "no-weights": 1.0, "no-expansion": 0.0}
    assert m["standing_fact_first_ablated"] == {"no-intent": 0.5, "no-weights": 1.0}
    assert m["routing_accuracy"] == pytest.approx(3 / 5)
    assert m["confusion"] == [[1, 1, 0], [0, 1, 0], [1, 0, 1]]
    f1_low, f1_medium, f1_high = 2 * 0.5 * 0.5 / 1.0, 2 * 0.5 * 1 / 1.5, 2 * 1 * 0.5 / 1.5
    assert m["macro_f1"] == pytest.approx((f1_low + f1_medium + f1_high) / 3)
    assert m["per_language"] == {"en": pytest.approx(0.5), "zh": 1.0}
    assert m["current_over_outdated"] == 0.5


def test_current_wins_needs_current_above_every_outdated():
    assert current_wins(["works at Microsoft", "works at Google"], "Microsoft", "Google")
    assert not current_wins(["works at Google", "works at Microsoft"], "Microsoft", "Google")
    assert not current_wins(["works at Google"], "Microsoft", "Google")
    assert current_wins(["likes tea"], "tea", None)


def test_fit_thresholds_finds_the_separating_cuts():
    values = [0.1, 0.2, 0.5, 0.6, 0.9, 1.0]
    expected = ["low", "low", "medium", "medium", "high", "high"]
    low, high = fit_thresholds(values, expected)
    assert 0.2 <= low < 0.5 and 0.6 <= high < 0.9


def test_router_model_round_trips_through_plain_numbers():
    signals = [dict.fromkeys(FEATURES, 0.0) for _ in range(6)]
    for i, s in enumerate(signals):
        s["change_cues"] = float(i >= 4)
        s["additive_cues"] = float(2 <= i < 4)
    records = [
        SimpleNamespace(signals=s, expected=e)
        for s, e in zip(signals, ["low", "low", "medium", "medium", "high", "high"])
    ]
    spec = fit_router(records)
    assert predict_router(spec, records) == [r.expected for r in records]
    probabilities = RouterModel(json.loads(json.dumps(spec))).probabilities(records[5].signals, [0.5, 0.4, 0.1])
    assert sum(probabilities.values()) == pytest.approx(1.0)
    uniform = RouterModel(spec).probabilities(records[5].signals)
    assert probabilities["high"] < uniform["high"]


def test_scenarios_refuses_the_file_its_calibration_was_fitted_on(tmp_path):
    data = tmp_path / "fit.jsonl"
    data.write_text(
        json.dumps(
            {
                "id": "a",
                "history": ["I like tea."],
                "probe": "Tea again.",
                "expected_level": "low",
                "query": "drink?",
                "current": "tea",
            }
        )
        + "\n"
    )
    calibration = tmp_path / "calibration.json"
    save_calibration({"fitted_on": str(data), "fitted_on_sha256": file_digest(data), "thresholds": {}}, calibration)
    result = CliRunner().invoke(
        app, ["scenarios", "--data", str(data), "--calibration", str(calibration), "--out", str(tmp_path / "out")]
    )
    assert result.exit_code != 0
    assert "fitted on" in result.output
    result = CliRunner().invoke(
        app, ["calibrate", "--data", str(data), "--evaluate", str(data), "--out", str(tmp_path / "c.json")]
    )
    assert result.exit_code != 0 and "different file" in result.output
    assert not (tmp_path / "c.json").exists()


def test_load_scenarios_reports_the_bad_line(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"id": "a"}\n')
    with pytest.raises(ValueError, match=r"s.jsonl:1"):
        load_scenarios(path)


SCENARIOS = [
    {
        "id": "t-low",
        "lang": "en",
        "history": ["I keep bees in my garden.", "Any good films this week?"],
        "probe": "Checked the hives again this morning, the bees are calm.",
        "expected_level": "low",
        "query": "What does the user keep?",
        "current": "bees",
        "outdated": None,
    },
    {
        "id": "t-medium",
        "lang": "en",
        "history": ["I work as a nurse.", "What's a quick lunch idea?"],
        "probe": "I also started learning the cello on weekends.",
        "expected_level": "medium",
        "query": "What instrument is the user learning?",
        "current": "cello",
        "outdated": None,
    },
    {
        "id": "t-high",
        "lang": "en",
        "history": ["I live in Leeds.", "How do I descale a kettle?"],
        "probe": "We moved to Glasgow last month, the new flat is lovely.",
        "expected_level": "high",
        "query": "Where does the user live?",
        "current": "Glasgow",
        "outdated": "Leeds",
    },
]


def test_scenarios_command_writes_results_report_and_plots_from_a_folder(tmp_path):
    from pcm.config import DEFAULT_CALIBRATION

    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "eval.jsonl").write_text("\n".join(json.dumps(s) for s in SCENARIOS) + "\n")
    fit = tmp_path / "fit.jsonl"
    fit.write_text(
        "\n".join(json.dumps({**s, "id": f"fit-{s['id']}", "probe": s["probe"].replace(".", "!")}) for s in SCENARIOS)
        + "\n"
    )
    shipped = json.loads(DEFAULT_CALIBRATION.read_text())
    calibration = tmp_path / "calibration.json"
    save_calibration({**shipped, "fitted_on": str(fit), "fitted_on_sha256": file_digest(fit)}, calibration)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["scenarios", "--data", str(folder), "--calibration", str(calibration), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())
    assert results["scenarios"] == 3 and results["default_scorer"] == "hybrid"
    assert set(results["scorers"]) >= {
        "nll",
        "nll_delta",
        "hybrid",
        "calibrated",
        "pair",
        "pair-without-cue-path",
        "routing-off",
    }
    assert results["scorers"]["routing-off"]["level_sources"] == {"routing-off": 3}
    assert results["scorers"]["routing-off"]["history_turns_corrected"] == 0
    high = next(r for r in results["records"]["calibrated"] if r["id"] == "t-high")
    assert set(high["current_over_outdated_ablated"]) == set(SEARCH_ABLATIONS)
    assert all(
        r["current_over_outdated_ablated"] is None for r in results["records"]["calibrated"] if r["id"] != "t-high"
    )
    # a "low" scenario's still-true fact is looked for again with each mechanism left out
    for r in results["records"]["calibrated"]:
        assert (set(r["standing_first_ablated"] or ()) == set(SEARCH_ABLATIONS)) == (r["expected"] == "low")
    shipped = results["scorers"][results["default_router"]]
    assert results["default_router"] == PCMContext().router
    assert set(shipped) >= {
        "routing_accuracy",
        "macro_f1",
        "current_over_outdated",
        "current_over_outdated_per_language",
        "supersession_hit_rate",
        "supersession_precision",
        "false_alarms_low",
        "dense_current_over_outdated_per_language",
        "standing_fact_first",
        "dense_standing_fact_first",
        "history_correction_share",
    }
    for metrics in results["scorers"].values():
        assert 0.0 <= metrics["routing_accuracy"] <= 1.0 and sum(map(sum, metrics["confusion"])) == 3
        assert metrics["current_over_outdated"] in (0.0, 1.0) and metrics["llm_calls_per_probe"] == 0.0
    trajectory = next(r for r in results["records"]["calibrated"] if r["id"] == "t-high")["trajectory"]
    shipped_ctx = PCMContext()
    assert len(trajectory) == 3 and trajectory[0]["outdated"] == pytest.approx(
        stated_weight(shipped_ctx.observation_weight, "I live in Leeds.", shipped_ctx), abs=1e-4
    )
    assert trajectory[-1]["current"] is not None
    assert set(results["signal_contributions"]) >= {"all_signals", "without_change_cues"}
    assert "langsmith" not in results
    report = (out / "report.md").read_text()
    assert "| calibrated |" in report and "weights.png" in report and "| routing-off |" in report
    assert "| routing | PCM | no-intent | no-weights | no-expansion | no-contests | no-time |" in report
    for image in ("s_eff.png", "weights.png"):
        assert (out / image).stat().st_size > 5000


def test_calibration_fits_the_routers_on_pair_scenarios_too_but_thresholds_on_the_file_only(tmp_path):
    from evals.fit.calibration import CHEAP_ROUTER_FEATURES, ROUTER_FEATURES, fit_calibration
    from pcm.formulas import LEVELS

    def record(level: str, value: float, relation: float) -> SimpleNamespace:
        signals = dict.fromkeys(ROUTER_FEATURES, 0.0)
        signals.update(
            nll=value, nll_delta=value, max_similarity=1.0 - value, conflict=value, relation_contradiction=relation
        )
        return SimpleNamespace(signals=signals, expected=level)

    fit = tmp_path / "fit.jsonl"
    fit.write_text("{}\n")
    records = [
        record(level, v, 0.5)
        for level, v in (("low", 0.1), ("low", 0.2), ("medium", 0.5), ("medium", 0.6), ("high", 0.9), ("high", 1.0))
    ]
    pairs = [record(level, 0.5, r) for level, r in (("low", 0.0), ("medium", 0.3), ("high", 1.0)) for _ in range(4)]
    alone = fit_calibration(records, PCMContext(), fit)
    both = fit_calibration(records, PCMContext(), fit, pairs, {"per_level": 4})
    assert both["thresholds"] == alone["thresholds"]  # θ: the scenario file's probes only
    assert both["router"]["features"] == list(ROUTER_FEATURES)
    assert both["router_cheap"]["features"] == list(CHEAP_ROUTER_FEATURES)
    assert both["pair_scenarios"] == {"count": 12, "per_level": 4} and alone["pair_scenarios"] == {"count": 0}
    contradiction = ROUTER_FEATURES.index("relation_contradiction")
    high = LEVELS.index("high")
    assert both["router"]["coef"][high][contradiction] > alone["router"]["coef"][high][contradiction]


def test_router_fit_counts_each_example_by_its_weight():
    signals = [dict.fromkeys(FEATURES, 0.0) for _ in range(10)]
    for s in signals[2:4]:
        s["additive_cues"] = 1.0
    for s in [*signals[4:6], *signals[6:]]:
        s["change_cues"] = 1.0
    # the first source calls a change cue "high", the second (chat turns) calls it "low"
    records = [
        SimpleNamespace(signals=s, expected=e)
        for s, e in zip(signals, ["low", "low", "medium", "medium", "high", "high", "low", "low", "low", "low"])
    ]
    cue = records[4].signals

    def p_high(weights):
        return RouterModel(fit_router(records, weights=weights)).probabilities(cue)["high"]

    assert fit_router(records) == fit_router(records, weights=[1.0] * len(records))
    assert p_high([5.0] * 6 + [1.0] * 4) > p_high(None) > p_high([1.0] * 6 + [5.0] * 4)


def test_calibration_learns_chat_turns_as_low_and_counts_the_file_by_its_weight(tmp_path):
    from evals.fit.calibration import ROUTER_FEATURES, fit_calibration
    from evals.fit.router_pairs import ChatTurnRecord

    def signals(value: float) -> dict:
        out = dict.fromkeys(ROUTER_FEATURES, 0.0)
        out.update(nll=value, change_cues=value, conflict=value)
        return out

    fit = tmp_path / "fit.jsonl"
    fit.write_text("{}\n")
    records = [
        SimpleNamespace(signals=signals(v), expected=level)
        for level, v in (("low", 0.0), ("low", 0.1), ("medium", 0.5), ("medium", 0.6), ("high", 0.9), ("high", 1.0))
    ]
    chat = [ChatTurnRecord(id=f"D1:{i}", signals=signals(0.9)) for i in range(6)]  # change words, no revision
    alone = fit_calibration(records, PCMContext(), fit)
    with_chat = fit_calibration(records, PCMContext(), fit, chat_records=chat, chat_note={"conversations": ["c"]})
    heavier = fit_calibration(records, PCMContext(), fit, chat_records=chat, file_weight=4.0)
    assert with_chat["thresholds"] == alone["thresholds"]
    assert with_chat["chat_turns"] == {"count": 6, "conversations": ["c"]} and alone["chat_turns"] == {"count": 0}
    assert all(c.expected == "low" for c in chat)
    high = [RouterModel(c["router"]).probabilities(signals(0.9))["high"] for c in (alone, with_chat, heavier)]
    assert high[1] < high[0] and high[1] < high[2]


@pytest.mark.parametrize(
    "name", ["scenarios_dev2.jsonl", "scenarios_dev3.jsonl", "scenarios_test.jsonl", "scenarios_blind.jsonl"]
)
def test_shipped_scenario_files_load_with_unique_ids_and_every_level(name):
    rows = load_scenarios(Path(__file__).resolve().parents[2] / "evals" / "data" / name)
    assert len({r["id"] for r in rows}) == len(rows)
    assert {r["expected_level"] for r in rows} == {"low", "medium", "high"}


def test_third_dev_file_keeps_its_written_rules():
    """scenarios_dev3.jsonl (written blind to PCM, now a dev file): 90 probes, a third per level and a
    third Chinese; for "high", `current` is in the probe only and `outdated` in the history only."""
    from pathlib import Path

    rows = load_scenarios(Path(__file__).resolve().parents[2] / "evals" / "data" / "scenarios_dev3.jsonl")
    assert len(rows) == 90
    assert sorted(sum(r["expected_level"] == level for r in rows) for level in ("low", "medium", "high")) == [30] * 3
    assert sum(r["lang"] == "zh" for r in rows) == 30
    for r in rows:
        history = " ".join(r["history"]).lower()
        if r["expected_level"] == "high":
            assert r["current"].lower() in r["probe"].lower() and r["current"].lower() not in history, r["id"]
            assert r["outdated"].lower() in history and r["outdated"].lower() not in r["probe"].lower(), r["id"]
        else:
            assert r["outdated"] is None


def test_a_scenario_replays_on_a_fixed_clock_not_the_day_it_runs(tmp_path, monkeypatch):
    """Memories are indexed with their date, so a replay at the wall clock depended on the day the
    benchmark ran; every message of a replay is said at a fixed moment, a second apart."""
    from evals.bench.scenarios import REPLAY_START, replay_moment, run_scenarios
    from pcm.api import PCM
    from pcm.config import load_context

    said_at: list[str | None] = []
    process = PCM.process

    def recording(self, text, **kwargs):
        said_at.append(kwargs.get("timestamp"))
        return process(self, text, **kwargs)

    monkeypatch.setattr(PCM, "process", recording)
    scenario = {
        "id": "s1",
        "lang": "en",
        "history": ["I'm a nurse on the night shift.", "I live in Leeds."],
        "probe": "Just moved into my new flat in Porto!",
        "expected_level": "high",
        "domain": "Personal",
        "query": "Where does the user live?",
        "current": "Porto",
        "outdated": "Leeds",
    }
    told_over_sessions = {
        **scenario,
        "id": "s2",
        "history": ["I'm a nurse on the night shift.", "Any tips for sleeping by day?", "I live in Leeds."],
        "session_starts": [0, 2],
        "session_dates": ["2025-03-01", "2025-04-12"],
    }
    records = run_scenarios(
        [scenario, told_over_sessions],
        load_context(data_dir=str(tmp_path), router="threshold", scorer="hybrid"),
        progress=False,
    )
    assert said_at[:3] == [replay_moment(0), replay_moment(1), replay_moment(2)]
    assert datetime.fromisoformat(said_at[2]) - REPLAY_START == timedelta(seconds=2)
    assert all(record.level in ("low", "medium", "high") for record in records)
    # a scenario told over sessions is said on its sessions' dates; the probe closes the last one
    assert said_at[3:] == [
        "2025-03-01T09:00:00+00:00",
        "2025-03-01T09:00:01+00:00",
        "2025-04-12T09:00:00+00:00",
        "2025-04-12T09:00:01+00:00",
    ]


@pytest.mark.parametrize(
    "sessions, problem",
    [
        ({"session_starts": [0, 2]}, "same non-zero length"),
        ({"session_starts": [1], "session_dates": ["2025-03-01"]}, "must start at 0"),
        ({"session_starts": [0, 0], "session_dates": ["2025-03-01", "2025-03-02"]}, "must start at 0, increase"),
        ({"session_starts": [0, 3], "session_dates": ["2025-03-01", "2025-03-02"]}, "inside the history"),
        ({"session_starts": [0, 1], "session_dates": ["2025-03-01", "March 2"]}, "ISO dates"),
        ({"session_starts": [0, 1], "session_dates": ["2025-03-02", "2025-03-01"]}, "not go back"),
    ],
)
def test_bad_sessions_are_refused_with_the_line_named(tmp_path, sessions, problem):
    from evals.bench.scenarios import load_scenarios

    row = {
        "id": "s1",
        "history": ["a", "b", "c"],
        "probe": "d",
        "expected_level": "low",
        "query": "q",
        "current": "a",
        **sessions,
    }
    path = tmp_path / "scenarios.jsonl"
    path.write_text(
        json.dumps({**row, "id": "s0", "session_starts": [0], "session_dates": ["2025-01-01"]})
        + "\n"
        + json.dumps(row)
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=f"scenarios.jsonl:2: bad sessions: .*{problem}"):
        load_scenarios(path)


def test_standing_fact_first_reads_the_first_memory_found_and_counts_only_low_scenarios():
    scenario = {"current": "Nurse"}
    assert standing_first(["I work as a nurse at St. Mary's.", "Rough night shift"], scenario)
    assert not standing_first(["Rough night shift", "I work as a nurse at St. Mary's."], scenario)
    assert not standing_first([], scenario)
    assert _share([True, None, False, True]) == pytest.approx(2 / 3) and _share([None]) is None


def test_pair_verdict_level_reads_the_memory_the_input_is_most_about():
    from evals.bench.scenarios import pair_verdict_level

    unrelated = {"consistent": 0.05, "novel": 0.9, "contradiction": 0.05}
    about = {"consistent": 0.3, "novel": 0.2, "contradiction": 0.5}
    assert pair_verdict_level({"m1": unrelated, "m2": about}) == "high"
    assert pair_verdict_level({"m1": unrelated}) == "medium"
    assert pair_verdict_level({}) == pair_verdict_level(None) == "medium"  # nothing judged: new
    records = [record("high", "medium"), record("low", "low"), record("medium", "medium")]
    records[0].pair_verdict_level, records[1].pair_verdict_level = "high", "high"
    m = routing_metrics(records)
    # the router gets 2 of 3 right; the pair verdicts 1 of the 2 that have one
    assert m["routing_accuracy"] == pytest.approx(2 / 3) and m["pair_verdict_accuracy"] == pytest.approx(1 / 2)


def test_a_replay_on_two_processes_gives_the_records_of_one_process(ctx):
    """`--workers 2` splits a replay over two processes. Every decision (level, current over
    outdated, what was superseded, the still-true fact first) must be the one process's, and every
    number equal to 1e-6: embeddings batched differently differ in the last float bits only."""
    from evals.bench.scenarios import REPLAY_BATCH, run_scenarios
    from pcm.services import Services

    rows = load_scenarios(Path(__file__).resolve().parents[2] / "evals" / "data" / "scenarios_dev2.jsonl")
    rows = rows[::5][: REPLAY_BATCH + 4]  # every level; two tasks, one per process
    calibrated = ctx.replace(router="calibrated")
    one = [r.as_dict() for r in run_scenarios(rows, calibrated, progress=False)]
    two = [r.as_dict() for r in run_scenarios(rows, calibrated, progress=False, workers=2)]
    assert [r["id"] for r in two] == [r["id"] for r in one] == [s["id"] for s in rows]
    assert {r["expected"] for r in one} == {"low", "medium", "high"}
    for a, b in zip(one, two):
        assert numbers_within(a, b, 1e-6), a["id"]
    with pytest.raises(ValueError, match="one process"):
        run_scenarios(rows[:2], calibrated, Services(calibrated, chat_model=object()), progress=False, workers=2)
    with pytest.raises(ValueError, match="at least 1"):
        run_scenarios(rows[:2], calibrated, progress=False, workers=0)


def test_translated_queries_replace_each_named_scenarios_query_and_refuse_a_mismatched_file(tmp_path):
    data = tmp_path / "scenarios_x.jsonl"
    rows = [
        {"id": "a", "lang": "en", "query": "Where does the user live?"},
        {"id": "b", "lang": "zh", "query": "What does the user eat?"},
    ]
    data.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    queries = tmp_path / "queries.jsonl"
    lines = [
        {"file": "scenarios_x.jsonl", "id": "a", "query": "用户住在哪里？"},
        {"file": "other.jsonl", "id": "zzz", "query": "不相关"},  # another file's: ignored
    ]
    queries.write_text("\n".join(json.dumps(q, ensure_ascii=False) for q in lines), encoding="utf-8")
    asked = translated_queries(rows, data, queries)
    assert [r["query"] for r in asked] == ["用户住在哪里？", "What does the user eat?"]
    assert [r["translated"] for r in asked] == [True, False] and rows[0]["query"] == "Where does the user live?"
    queries.write_text(json.dumps({"file": "scenarios_x.jsonl", "id": "nope", "query": "哪里？"}), encoding="utf-8")
    with pytest.raises(ValueError, match="not in"):
        translated_queries(rows, data, queries)
    queries.write_text(json.dumps({"file": "other.jsonl", "id": "a", "query": "哪里？"}), encoding="utf-8")
    with pytest.raises(ValueError, match="no translation"):
        translated_queries(rows, data, queries)
    queries.write_text(json.dumps({"file": "scenarios_x.jsonl", "id": "a", "query": " "}), encoding="utf-8")
    with pytest.raises(ValueError, match="non-empty query"):
        translated_queries(rows, data, queries)
