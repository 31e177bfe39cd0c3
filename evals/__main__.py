"""`python -m evals ...`: PCM's benchmarks (scenarios, calibration, LoCoMo, analysis)."""

from __future__ import annotations

import json
import logging
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(
    help="PCM evaluation harness. Every figure comes from what the command ran, on the data it names.",
    no_args_is_help=True,
    add_completion=False,
)
DEV_SCENARIOS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "pcm_scenarios" / "dev.jsonl"
DEV2_SCENARIOS = Path(__file__).resolve().parent / "data" / "scenarios_dev2.jsonl"
WORKERS = typer.Option(
    1,
    "--workers",
    min=1,
    help="processes that share the replay: each scenario or conversation "
    "is its own user, so the figures do not depend on it",
)


def _setup_logging() -> None:
    from evals.tracking import configure_tracing

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    configure_tracing()


def _log_to_langsmith(benchmark: str, items: list[dict], metrics: list[str], results: dict) -> None:
    """With LANGSMITH_API_KEY set, record the per-item figures as a LangSmith experiment."""
    from evals.tracking import log_experiment

    logged = log_experiment(
        benchmark, items, metrics, metadata={"data": results.get("data"), "date": results.get("date")}
    )
    if logged:
        results["langsmith"] = logged
        typer.echo(f"LangSmith experiment {logged['experiment']} on dataset {logged['dataset']}")


@app.command()
def scenarios(
    data: Path = typer.Option(DEV2_SCENARIOS, help="scenario JSONL file, or a folder of them (not the calibration's)"),
    out: Path = typer.Option(Path("results/scenarios"), help="output folder"),
    calibration: Optional[Path] = typer.Option(None, help="calibration file (default: the shipped one)"),
    scorer: list[str] = typer.Option(["nll", "nll_delta", "hybrid"], help="scorers to evaluate with thresholds"),
    router: list[str] = typer.Option(
        [
            "calibrated",
            "calibrated-configured-prior",
            "calibrated-one-step-prior",
            "calibrated-rare-contradictions-prior",
            "calibrated-no-life-states",
            "pair",
            "pair-without-cue-path",
            "routing-off",
        ],
        help="routers to evaluate (the shipped one is always included)",
    ),
    contributions: bool = typer.Option(
        True,
        "--contributions/--no-contributions",
        help="also measure each signal's contribution to the calibrated router",
    ),
    default_scorer: Optional[str] = typer.Option(None, help="the scorer the system uses (default: config)"),
    queries: Optional[Path] = typer.Option(
        None, help="translated queries (JSONL file, id, query): ask in the other language (cross-lingual check)"
    ),
    workers: int = WORKERS,
) -> None:
    """Routing accuracy, macro-F1, current-over-outdated (per language), supersession and false alarms
    per scorer and router, with the dense baseline, on one file."""
    from evals.bench.report import write_scenario_report
    from evals.bench.scenarios import (
        load_scenarios,
        relation_without_cue_path,
        routing_metrics,
        run_scenarios,
        scenario_files,
        translated_queries,
    )
    from evals.fit.calibration import signal_contributions
    from evals.provenance import file_digest
    from pcm.config import load_calibration, load_context
    from pcm.perception.relation import load_relation_model
    from pcm.services import Services

    _setup_logging()
    rows = load_scenarios(data)
    if queries is not None:
        rows = translated_queries(rows, data, queries)
    base = load_context(calibration_file=str(calibration) if calibration else None)
    fitted = load_calibration(base.calibration_path)
    fitted_on = fitted.get("fitted_on")
    if any(fitted.get("fitted_on_sha256") == file_digest(f) for f in scenario_files(data)):
        raise typer.BadParameter(f"the calibration was fitted on a file in {data}; evaluate on a different file")
    services = Services(base)
    results: dict = {
        "data": str(data),
        "scenarios": len(rows),
        "queries": str(queries) if queries else None,
        "calibration": str(base.calibration_path),
        "calibration_fitted_on": fitted_on,
        "default_scorer": default_scorer or base.scorer,
        "default_router": base.router,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "scorers": {},
    }
    records = {}
    for name in scorer:
        ctx = base.replace(scorer=name, router="threshold")
        records[name] = run_scenarios(rows, ctx, services, workers=workers)
        results["scorers"][name] = routing_metrics(records[name])
    cascades = {
        "calibrated": base.replace(router="calibrated"),
        # ablation: the configured level prior for every turn, not the user's own estimate
        "calibrated-configured-prior": base.replace(router="calibrated", level_prior_turns=0.0),
        # ablation: the user's own prior after one EM step (the mean re-weighted posterior)
        "calibrated-one-step-prior": base.replace(router="calibrated", level_prior_iterations=1),
        "calibrated-rare-contradictions-prior": base.replace(router="calibrated", level_prior=[0.5, 0.4, 0.1]),
        # ablation: no life-state table (`pcm.life_states`), the pair verdicts and turn signals alone
        "calibrated-no-life-states": base.replace(router="calibrated", life_states=False),
        "pair": base.replace(router="pair"),
        # ablation: no surprise routing, every turn to maintenance (as bench-locomo's pcm-routing-off)
        "routing-off": base.replace(router="off"),
        "pair-without-cue-path": base.replace(
            router="pair", relation_model_file=str(relation_without_cue_path(base.relation_model_path, out))
        ),
    }
    unknown = set(router) - set(cascades)
    if unknown:
        raise typer.BadParameter(f"unknown routers {sorted(unknown)}; known: {sorted(cascades)}")
    if base.router == "pair" and base.relation_model_path.is_file():
        tuned_on = (load_relation_model(base.relation_model_path).spec.get("thresholds") or {}).get(
            "fitted_on_sha256", []
        )
        results["relation_thresholds_tuned_on_this_file"] = any(
            file_digest(f) in tuned_on for f in scenario_files(data)
        )
    for name, cascade in cascades.items():
        if name not in router and name != base.router:
            continue
        records[name] = run_scenarios(rows, cascade, services, workers=workers)
        results["scorers"][name] = routing_metrics(records[name])
        results["scorers"][name].update(
            s_eff_scorer=cascade.scorer,
            level_prior=cascade.level_prior,
            level_prior_turns=cascade.level_prior_turns,
            level_prior_iterations=cascade.level_prior_iterations,
        )
    out.mkdir(parents=True, exist_ok=True)
    results["records"] = {name: [r.as_dict() for r in recs] for name, recs in records.items()}
    if contributions and fitted_on and Path(fitted_on).exists():
        signals_only = base.replace(router="off", scorer="nll")
        train = run_scenarios(load_scenarios(fitted_on), signals_only, services, workers=workers)
        held_out = run_scenarios(rows, signals_only, services, workers=workers)
        results["signal_contributions"] = signal_contributions(train, held_out)
    shipped = records.get(base.router) or next(iter(records.values()))
    _log_to_langsmith(
        "scenarios",
        [
            {
                "id": r.id,
                "inputs": {"history": row["history"], "probe": row["probe"], "query": row["query"]},
                "reference": {
                    "expected_level": row["expected_level"],
                    "current": row["current"],
                    "outdated": row.get("outdated"),
                },
                "outputs": {
                    "level": r.level,
                    "routing_correct": float(r.level == r.expected),
                    "current_over_outdated": None
                    if r.current_over_outdated is None
                    else float(r.current_over_outdated),
                },
            }
            for r, row in zip(shipped, rows)
        ],
        ["routing_correct", "current_over_outdated"],
        results,
    )
    (out / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
    write_scenario_report(results, out)
    typer.echo((out / "report.md").read_text(encoding="utf-8"))


@app.command()
def calibrate(
    data: Path = typer.Option(DEV_SCENARIOS, help="scenario JSONL file to fit on"),
    out: Path = typer.Option(Path("pcm/calibration/default.json"), help="calibration file to write"),
    evaluate: Optional[Path] = typer.Option(None, help="a different scenario file to report accuracy on"),
    pairs_per_level: int = typer.Option(
        300, help="router scenarios built from the relation training pairs, per level (0: the scenario file only)"
    ),
    folds: int = typer.Option(3, help="folds of pair groups for the out-of-fold relation signals"),
    chat: list[Path] = typer.Option(
        [], help='LoCoMo conversation JSON files whose turns the routers learn as "low" (a chat between friends)'
    ),
    file_weight: float = typer.Option(3.0, help="how many times each probe of --data counts in the routers' fit"),
    router_pairs: list[Path] = typer.Option(
        [], help="pair files or folders the router's pair scenarios are built from (default: all of training/)"
    ),
    workers: int = WORKERS,
) -> None:
    """Fit θ_low/θ_high per scorer and the signal router on one file (plus scenarios built from the
    relation training pairs and the turns of --chat conversations); report on another. Needs the
    relation model (`make fit-relation`)."""
    from evals.bench.scenarios import load_scenarios, routing_metrics, run_scenarios
    from evals.fit.calibration import fit_calibration, save_calibration
    from evals.fit.relation_pairs import load_pairs
    from evals.fit.router_pairs import chat_turn_records, out_of_fold_relation_signals, pair_scenarios
    from evals.provenance import file_digest
    from pcm.config import load_context
    from pcm.datasets.locomo import load_locomo
    from pcm.perception.relation import load_relation_model
    from pcm.services import Services

    _setup_logging()
    if evaluate is not None and file_digest(evaluate) == file_digest(data):
        raise typer.BadParameter("--evaluate must be a different file from --data")
    if pairs_per_level < 0 or folds < 2 or file_weight <= 0:
        raise typer.BadParameter("--pairs-per-level must be at least 0, --folds at least 2 and --file-weight above 0")
    try:
        conversations = [c for path in chat for c in load_locomo(path)]
    except (FileNotFoundError, ValueError) as error:
        raise typer.BadParameter(f"--chat: {error}") from error
    try:
        pairs = load_pairs(*router_pairs) if pairs_per_level else []
    except (FileNotFoundError, ValueError) as error:
        raise typer.BadParameter(f"--router-pairs: {error}") from error
    started = time.perf_counter()
    ctx = load_context(router="off", scorer="nll")
    services = Services(ctx)
    records = run_scenarios(load_scenarios(data), ctx, services, workers=workers)
    pair_records, note = [], {}
    if pairs_per_level:
        relation = load_relation_model(ctx.relation_model_path)
        scenarios = pair_scenarios(pairs, pairs_per_level, seed=0)
        pair_records = out_of_fold_relation_signals(
            run_scenarios(scenarios, ctx, services, workers=workers),
            scenarios,
            pairs,
            services.embedder.encode,
            relation.features,
            float(relation.spec.get("C", 0.01)),
            folds=folds,
            seed=0,
            rank=relation.basis.rank if relation.basis is not None else 0,
        )
        note = {"per_level": pairs_per_level, "folds": folds, "pairs": len(pairs), "seed": 0}
        note["files"] = [str(path) for path in router_pairs] or ["training/relation_pairs"]
    chat_records = chat_turn_records(conversations, ctx, services) if conversations else []
    chat_note = {"conversations": [c.sample_id for c in conversations]}
    calibration = fit_calibration(records, ctx, data, pair_records, note, chat_records, chat_note, file_weight)
    calibration["fit_seconds"] = round(time.perf_counter() - started, 1)
    save_calibration(calibration, out)
    typer.echo(
        f"wrote {out} (fitted on {len(records)} scenarios of {data} counted {file_weight:g} times, "
        f"{len(pair_records)} built from the relation training pairs and {len(chat_records)} chat turns of "
        f"{', '.join(chat_note['conversations']) or 'no conversation'}, {calibration['fit_seconds']} s)"
    )
    typer.echo(json.dumps(calibration["thresholds"], indent=2))
    if evaluate is not None:
        report_on = load_scenarios(evaluate)
        evaluated = run_scenarios(
            report_on, load_context(router="calibrated", calibration_file=str(out)), services, workers=workers
        )
        metrics = routing_metrics(evaluated)
        typer.echo(
            f"{evaluate} (not fitted on; a dev file if its errors were read): routing accuracy "
            f"{metrics['routing_accuracy']:.3f}, "
            f"macro-F1 {metrics['macro_f1']:.3f}, current-over-outdated {metrics['current_over_outdated']}"
        )


@app.command("fit-relation")
def fit_relation_command(
    out: Path = typer.Option(Path("pcm/calibration/relation.json"), help="relation model file to write"),
    dev: list[Path] = typer.Option([DEV_SCENARIOS, DEV2_SCENARIOS], help="dev scenario files for the thresholds"),
    lm_pairs: int = typer.Option(0, help="also compare the causal LM's hidden states on this many pairs (slow)"),
    workers: int = typer.Option(1, help="processes replaying the dev files"),
    encoders: str = typer.Option(
        "minilm", help="encoder sets whose variants compete, comma-separated: minilm, use, minilm+use"
    ),
) -> None:
    """Fit the pair relation model on training/relation_pairs (group-held-out accuracy per label, kind
    and language for each input variant) and choose the pair router's thresholds on the dev files."""
    from evals.fit.relation_fit import fit_relation

    _setup_logging()
    encoder_sets = tuple(name.strip() for name in encoders.split(",") if name.strip())
    fit_relation(out, dev, lm_pairs, report=typer.echo, workers=workers, encoder_sets=encoder_sets)


@app.command("fit-cross-encoder")
def fit_cross_encoder_command(
    epochs: int = typer.Option(3, help="passes over the training pairs"),
    out: Optional[Path] = typer.Option(None, help="folder for the fine-tuned weights and the per-epoch results"),
) -> None:
    """Fine-tune MiniLM end to end as a cross-encoder on the relation pairs and report its held-out
    accuracy on fit-relation's split (an alternative measured against the shipped head, not shipped)."""
    from evals.fit.cross_encoder import fit_cross_encoder

    _setup_logging()
    fit_cross_encoder(epochs, out=out, report=typer.echo)


@app.command()
def locomo(
    data: Path = typer.Option(Path("../shared/datasets/locomo"), help="folder or file, either LoCoMo layout"),
    out: Path = typer.Option(Path("results/locomo"), help="output folder"),
    retrieval_only: bool = typer.Option(False, "--retrieval-only", help="skip answering questions even with an LLM"),
    judge: bool = typer.Option(True, "--judge/--no-judge", help="with an LLM, also score answers by an LLM judge"),
    limit_conversations: Optional[int] = typer.Option(None, help="only the first N conversations"),
    limit_turns: Optional[int] = typer.Option(None, help="only the first N turns of each (quick runs)"),
    config: Optional[Path] = typer.Option(None, help="PCM settings file"),
    workers: int = WORKERS,
) -> None:
    """Retrieval recall/NDCG of PCM, its ablations and BM25/dense/fusion baselines, in one run; the
    conversations a shipped model was fitted on are marked, and routing is compared on and off over all
    conversations and over the others."""
    from evals.bench.locomo import run_locomo
    from evals.bench.report import write_locomo_report
    from pcm.config import load_context
    from pcm.datasets.locomo import load_locomo

    _setup_logging()
    conversations = load_locomo(data)[:limit_conversations]
    results = run_locomo(
        conversations,
        load_context(config),
        limit_turns=limit_turns,
        answer_questions=not retrieval_only,
        judge=judge,
        workers=workers,
    )
    results["data"] = str(data)
    _log_to_langsmith(
        "locomo", results["items"], ["recall@1", "recall@5", "recall@10", "recall@20", "ndcg@10"], results
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
    write_locomo_report(results, out)
    typer.echo((out / "report.md").read_text(encoding="utf-8"))


@app.command()
def followups(
    data: Path = typer.Option(
        Path(__file__).resolve().parent / "data" / "followups_blind.jsonl",
        help="follow-up JSONL file (evals/bench/followups.py says what it holds)",
    ),
    out: Path = typer.Option(Path("results/followups"), help="output folder"),
    config: Optional[Path] = typer.Option(None, help="PCM settings file"),
) -> None:
    """After a revision, do later mentions of the old state leave it revised; after a look-alike, do
    later confirmations keep the still-true fact first? PCM with and without reaffirmation, dense alongside."""
    from evals.bench.followups import load_followups, report, run_followups
    from pcm.config import load_context

    _setup_logging()
    items = load_followups(data)
    started = datetime.now(timezone.utc)
    results = run_followups(items, load_context(config))
    results.update(
        data=str(data),
        items=len(items),
        date=started.isoformat(timespec="seconds"),
        wall_seconds=round((datetime.now(timezone.utc) - started).total_seconds(), 1),
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
    (out / "report.md").write_text(report(results), encoding="utf-8")
    typer.echo(report(results))


@app.command()
def latency(
    data: Path = typer.Option(Path("../shared/datasets/locomo/conv-26.json"), help="LoCoMo file or folder"),
    conversation: Optional[str] = typer.Option(None, help="sample id (default: the first)"),
    limit_turns: Optional[int] = typer.Option(None, help="only the first N turns"),
    config: Optional[Path] = typer.Option(None, help="PCM settings file"),
) -> None:
    """Per-turn latency percentiles of the offline pipeline over one conversation, models loaded first."""
    from evals.bench.latency import measure_latency
    from pcm.config import load_context

    _setup_logging()
    typer.echo(json.dumps(measure_latency(str(data), load_context(config), conversation, limit_turns), indent=2))


@app.command()
def scale(
    data: Path = typer.Option(Path("../shared/datasets/locomo"), help="LoCoMo file or folder"),
    sizes: str = typer.Option("1000,10000,100000", help="memories of one user, comma-separated"),
    users: int = typer.Option(1000, help="users served round-robin from one process (0: skip)"),
    per_user: int = typer.Option(200, help="memories per user of the many-users run"),
    turns: int = typer.Option(50, help="process() turns measured per size"),
    questions: int = typer.Option(50, help="search() queries measured per size"),
    configurations: str = typer.Option("embedded,servers", help="embedded and/or servers (PostgreSQL + Chroma)"),
    out: Path = typer.Option(Path("results/scale"), help="output folder"),
) -> None:
    """Per-turn cost, search latency, bytes written, cold open and RSS as memory grows (see evals/bench/scale.py)."""
    from evals.bench.scale import report, run_scale

    _setup_logging()
    started = datetime.now(timezone.utc)
    results = run_scale(
        str(data),
        [int(s) for s in sizes.split(",") if s],
        users,
        per_user,
        turns,
        questions,
        [c for c in configurations.split(",") if c],
        progress=typer.echo,
        embedding_cache=out / "embeddings.npz",
    )
    results["date"] = started.isoformat(timespec="seconds")
    results["wall_seconds"] = (datetime.now(timezone.utc) - started).total_seconds()
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    (out / "report.md").write_text(report(results) + "\n", encoding="utf-8")
    typer.echo(report(results))


@app.command()
def concurrency(
    data: Path = typer.Option(Path("../shared/datasets/locomo/conv-26.json"), help="LoCoMo file or folder"),
    conversation: Optional[str] = typer.Option(None, help="sample id (default: the first)"),
    turns: int = typer.Option(60, min=1, help="turns the writer process ingests while this process searches"),
    searches: int = typer.Option(
        1000, min=1, help="searches at most while the writer runs (one after another until it is done)"
    ),
    baseline_searches: int = typer.Option(100, min=1, help="searches with no writer (the baseline)"),
    seed_turns: int = typer.Option(20, min=0, help="turns stored (in this process) before any search"),
    config: Optional[Path] = typer.Option(None, help="PCM settings file (storage is embedded whatever it says)"),
    out: Path = typer.Option(Path("results/concurrency"), help="output folder"),
) -> None:
    """Search p50/p95/p99/max while another process ingests turns of the same user (embedded storage),
    beside the same searches with no writer; failed and stale searches, turns committed meanwhile."""
    from evals.bench.concurrency import report, run_concurrency

    _setup_logging()
    started = datetime.now(timezone.utc)
    results = run_concurrency(
        str(data),
        turns,
        searches,
        seed_turns,
        str(config) if config else None,
        conversation,
        baseline_searches=baseline_searches,
        progress=typer.echo,
    )
    results["date"] = started.isoformat(timespec="seconds")
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    (out / "report.md").write_text(report(results) + "\n", encoding="utf-8")
    typer.echo(report(results))


@app.command()
def entities(
    data: Path = typer.Option(
        Path(__file__).resolve().parent / "data" / "entities_dev.jsonl", help="entity-labelled JSONL file"
    ),
    out: Path = typer.Option(Path("results/entities"), help="output folder"),
    locomo: Path = typer.Option(
        DEV_SCENARIOS.parents[1] / "locomo",
        help="LoCoMo folder: the speakers of an item's conversation (its source) count as known names",
    ),
    errors: bool = typer.Option(False, "--errors/--no-errors", help="list each item's errors in the report"),
) -> None:
    """Precision, recall and F1 of the entity nodes' extractor (`named_entities`) on labelled turns,
    overall and per language, beside the extractor they used before, in one process."""
    from evals.bench.entities import load_entity_items, report, run_entities, speakers_by_conversation

    _setup_logging()
    items = load_entity_items(data)
    speakers = speakers_by_conversation(locomo) if locomo.exists() else {}
    results = {
        "data": str(data),
        "items": len(items),
        "speakers_from": str(locomo) if speakers else None,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "extractors": run_entities(items, speakers),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
    (out / "report.md").write_text(report(results, errors), encoding="utf-8")
    typer.echo((out / "report.md").read_text(encoding="utf-8"))


@app.command("life-states")
def life_states_command(
    pairs: list[Path] = typer.Option(
        [], help="labelled pair files or folders (none: the relation model's training pairs)"
    ),
    statements: list[Path] = typer.Option(
        [], help="labelled single statements instead (evals/data/life_statements_*.jsonl): how each is read"
    ),
    out: Path = typer.Option(Path("results/life-states"), help="output folder"),
) -> None:
    """How far the life-state table reaches: the contradictions on which it finds a clash, by kind
    and language, and the consistent and novel pairs it would wrongly send to correction; with
    `--statements`, the labelled statements it reads as their state and the near misses it reads as one."""
    from evals.bench.life_state_reach import report, table_reach
    from evals.fit.relation_pairs import TRAINING_DIR, load_pairs

    _setup_logging()
    if statements:
        _life_statements(statements, out)
        return
    try:
        rows = load_pairs(*pairs)
    except (FileNotFoundError, ValueError) as error:
        raise typer.BadParameter(str(error)) from error
    source = ", ".join(map(str, pairs or [TRAINING_DIR]))
    results = {"pairs_from": source, "date": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    results.update(table_reach(rows))
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
    (out / "report.md").write_text(report(results, source) + "\n", encoding="utf-8")
    typer.echo(report(results, source))


def _life_statements(files: list[Path], out: Path) -> None:
    from evals.bench.life_state_reach import load_statements, statement_reads, statements_report

    _per_file_reports(files, load_statements, statement_reads, statements_report, out)


def _per_file_reports(files: list[Path], load, measure, report, out: Path) -> None:
    """`measure` of the rows `load` reads from each of `files`, written to `out` (results.json, report.md) and
    echoed; a file that cannot be read is an error before anything is written."""
    reports, results = [], {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "files": {}}
    for path in files:
        try:
            rows = load(path)
        except (FileNotFoundError, ValueError) as error:
            raise typer.BadParameter(str(error)) from error
        results["files"][str(path)] = measure(rows)
        reports.append(report(results["files"][str(path)], str(path)))
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
    (out / "report.md").write_text("\n\n".join(reports) + "\n", encoding="utf-8")
    typer.echo("\n\n".join(reports))


@app.command("speech-acts")
def speech_acts_command(
    data: list[Path] = typer.Option(
        [Path("evals/data/speech_acts_test.jsonl")], help="labelled turns (evals/data/speech_acts_*.jsonl)"
    ),
    out: Path = typer.Option(Path("results/speech-acts"), help="output folder"),
) -> None:
    """How the request guard (`pcm.speech_acts.is_request`) reads turns that ask something: those that also
    tell a fact read as requests (the fact is lost), and those that tell nothing read as statements."""
    from evals.bench.speech_acts import load_speech_acts, report, request_reads

    _setup_logging()
    _per_file_reports(data, load_speech_acts, request_reads, report, out)


@app.command("relation-accuracy")
def relation_accuracy_command(
    pairs: list[Path] = typer.Option([Path("evals/data/pairs_blind.jsonl")], help="labelled pair files or folders"),
    out: Path = typer.Option(Path("results/relation-accuracy"), help="output folder"),
) -> None:
    """The shipped relation model's accuracy on labelled pairs, per label, language and kind."""
    from evals.bench.relation_accuracy import relation_accuracy, report
    from evals.fit.relation_pairs import load_pairs
    from pcm.config import load_context
    from pcm.services import Services

    _setup_logging()
    try:
        rows = load_pairs(*pairs)
    except (FileNotFoundError, ValueError) as error:
        raise typer.BadParameter(str(error)) from error
    ctx = load_context()
    results = relation_accuracy(Services(ctx).pair_judge(ctx), rows)
    source = ", ".join(map(str, pairs))
    results = {"pairs_from": source, "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), **results}
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
    (out / "report.md").write_text(report(results, source) + "\n", encoding="utf-8")
    typer.echo(report(results, source))


@app.command()
def llm(
    data: Path = typer.Option(Path("../shared/datasets/locomo/conv-26.json"), help="LoCoMo file or folder"),
    out: Path = typer.Option(Path("results/llm"), help="output folder"),
    conversation: Optional[str] = typer.Option(None, help="sample id (default: the first)"),
    limit_turns: Optional[int] = typer.Option(None, help="only the first N turns"),
    config: Optional[Path] = typer.Option(None, help="PCM settings file"),
) -> None:
    """LLM calls and tokens per ingested turn, validation failures and latency, in LLM mode on one
    conversation: against PCM_LLM_* when set, else the local SmolLM2 server (started here)."""
    from evals.bench.llm_bench import bench_report, run_llm_bench
    from pcm.config import load_context

    _setup_logging()
    logging.getLogger("pcm.llm").setLevel(logging.ERROR)
    results = run_llm_bench(str(data), load_context(config), conversation, limit_turns)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
    (out / "report.md").write_text(bench_report(results), encoding="utf-8")
    typer.echo((out / "report.md").read_text(encoding="utf-8"))


@app.command("llm-headroom")
def llm_headroom(
    data: list[Path] = typer.Option(
        [DEV_SCENARIOS, DEV2_SCENARIOS, Path(__file__).resolve().parent / "data" / "scenarios_dev3.jsonl"],
        help="dev scenario files (the judge reads their labels)",
    ),
    confidence: str = typer.Option("0.6,0.8,0.9", help="cascade_confidence values, comma-separated"),
    out: Path = typer.Option(Path("results/llm-headroom"), help="output folder"),
    config: Optional[Path] = typer.Option(None, help="PCM settings file"),
) -> None:
    """How far LLM mode can go: the scenario replay with a perfect judge where the cascade would ask
    the LLM, beside the same replay offline, at each cascade_confidence (evals/bench/llm_headroom.py)."""
    from evals.bench.llm_headroom import headroom_report, measure_headroom
    from pcm.config import load_context

    try:
        confidences = [float(c) for c in confidence.split(",") if c.strip()]
    except ValueError:
        raise typer.BadParameter(f"expected numbers separated by commas, got {confidence!r}", param_hint="--confidence")
    if not confidences or any(not 0.0 < c for c in confidences):
        raise typer.BadParameter(f"expected positive numbers, got {confidence!r}", param_hint="--confidence")
    _setup_logging()
    started = datetime.now(timezone.utc)
    rows = [row for file in data for row in measure_headroom(file, load_context(config), confidences)]
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(
        json.dumps({"date": started.isoformat(timespec="seconds"), "rows": rows}, indent=2, ensure_ascii=False),
        encoding="utf-8",
    )
    (out / "report.md").write_text(headroom_report(rows), encoding="utf-8")
    typer.echo(headroom_report(rows))


@app.command()
def analyze(
    runs: list[Path] = typer.Argument(..., help="result folders (each with results.json)"),
    misses: int = typer.Option(10, help="worst misses to list"),
) -> None:
    """Compare runs side by side; show routing/S_eff distributions and PCM's worst misses."""
    from evals.bench.report import analyze_runs

    typer.echo(analyze_runs(runs, misses))


if __name__ == "__main__":
    app()
