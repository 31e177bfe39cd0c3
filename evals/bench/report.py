"""Markdown reports and PNG plots of benchmark results (written next to results.json)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from pcm.formulas import LEVELS  # noqa: E402

COLOURS = {"low": "#2a9d8f", "medium": "#e9c46a", "high": "#e76f51"}


def _fmt(value) -> str:
    return "–" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def write_scenario_report(results: dict, out: Path) -> None:
    """report.md (routing table, confusion matrices, signal contributions) and s_eff.png."""
    out = Path(out)
    lines = [
        f"# Belief-revision scenarios — {results['data']}",
        "",
        f"{results['scenarios']} scenarios, run {results['date']}; calibration `{results['calibration']}` "
        f"fitted on `{results.get('calibration_fitted_on')}`. Default scorer `{results['default_scorer']}`, "
        f"router `{results['default_router']}`.",
        "",
        "| routing | accuracy | macro-F1 | accuracy per language | current over outdated "
        "| … per language | dense baseline: current over outdated (per language) | supersession hit rate "
        "| supersession precision | false alarms (low → high) | still-true fact first on low (dense) "
        "| LLM calls per probe | level sources | relation verdict alone: accuracy | history turns corrected |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, m in results["scorers"].items():
        label = name if name.startswith(("calibrated", "pair", "routing")) else f"{name} + thresholds"
        dense = ", ".join(f"{k} {v:.2f}" for k, v in m.get("dense_current_over_outdated_per_language", {}).items())
        languages = ", ".join(f"{k} {v:.2f}" for k, v in m["per_language"].items())
        revisions = ", ".join(f"{k} {v:.2f}" for k, v in m.get("current_over_outdated_per_language", {}).items())
        sources = ", ".join(f"{k} {v}" for k, v in m.get("level_sources", {}).items())
        lines.append(
            f"| {label} | {_fmt(m['routing_accuracy'])} | {_fmt(m['macro_f1'])} | {languages} | "
            f"{_fmt(m['current_over_outdated'])} | {revisions} | {_fmt(m['dense_current_over_outdated'])} "
            f"({dense}) | {_fmt(m.get('supersession_hit_rate'))} | {_fmt(m.get('supersession_precision'))} | "
            f"{_fmt(m.get('false_alarms_low'))} | {_fmt(m.get('standing_fact_first'))} "
            f"({_fmt(m.get('dense_standing_fact_first'))}) | {_fmt(m.get('llm_calls_per_probe'))} | {sources} | "
            f"{_fmt(m.get('pair_verdict_accuracy'))} | {m.get('history_turns_corrected', '–')} "
            f"({_fmt(m.get('history_correction_share'))}) |"
        )
    for measure, title in (
        ("current_over_outdated", "Current over outdated"),
        ("standing_fact_first", 'Still-true fact first on "low" scenarios'),
    ):
        ablated = {name: m for name, m in results["scorers"].items() if m.get(f"{measure}_ablated")}
        if not ablated:
            continue
        names = list(next(iter(ablated.values()))[f"{measure}_ablated"])
        lines += [
            "",
            f"{title} with each retrieval mechanism left out (the same replay, the query asked again):",
            "",
            f"| routing | PCM | {' | '.join(names)} |",
            "|---|---|" + "---|" * len(names),
        ]
        lines += [
            f"| {name} | {_fmt(m[measure])} | " + " | ".join(_fmt(m[f"{measure}_ablated"].get(n)) for n in names) + " |"
            for name, m in ablated.items()
        ]
    for name, m in results["scorers"].items():
        lines += ["", f"Confusion, {name} (rows expected, columns taken: low, medium, high): `{m['confusion']}`"]
    if results.get("signal_contributions"):
        lines += [
            "",
            "Router accuracy on this file when fitted on the calibration file with all signals, "
            "and with each signal left out:",
            "",
            "| signals | accuracy |",
            "|---|---|",
        ]
        lines += [f"| {k} | {v:.3f} |" for k, v in results["signal_contributions"].items()]
    lines += [
        "",
        "![S_eff by expected level](s_eff.png)",
        "",
        "Weights, turn by turn, of the stored message holding the current fact and of the one holding the "
        "outdated fact (shipped router):",
        "",
        "![weight trajectories](weights.png)",
        "",
    ]
    (out / "report.md").write_text("\n".join(lines), encoding="utf-8")
    _plot_s_eff(results, out / "s_eff.png")
    _plot_weight_trajectories(results.get("records", {}).get(results["default_router"], []), out / "weights.png")


def _plot_s_eff(results: dict, path: Path) -> None:
    names = list(results.get("records", {}))
    if not names:
        return
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3.2), squeeze=False)
    for axis, name in zip(axes[0], names):
        records = results["records"][name]
        for level in LEVELS:
            values = [r["s_eff"] for r in records if r["expected"] == level]
            axis.hist(values, bins=15, alpha=0.6, color=COLOURS[level], label=f"expected {level}")
        metrics = results["scorers"].get(name, {})
        axis.set_title(f"{name}: acc {metrics.get('routing_accuracy', float('nan')):.2f}")
        axis.set_xlabel("S_eff")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _routing_lines(results: dict) -> list[str]:
    """Which conversations the shipped router was fitted on, each one's turns routed to correction,
    and routing on against off over all conversations and over those no shipped model saw."""
    routing, fitted = results.get("routing"), results.get("fitted_conversations")
    if not routing or not fitted:
        return []
    off = routing["routing_off_system"]
    lines = [
        "",
        f"Conversations a shipped model was fitted on: {', '.join(fitted['conversations']) or 'none'} "
        f'(their turns were "low" examples of the router in `{fitted["calibration"]}`). Turns routed to '
        "correction per conversation:",
        "",
        "| conversation | fitted on | turns | routed to correction | questions |",
        "|---|---|---|---|---|",
    ]
    for name, c in results["per_conversation"].items():
        share = c["correction_turns"] / c["turns"] if c["turns"] else None
        lines.append(
            f"| {name} | {'yes' if c['fitted_on'] else 'no'} | {c['turns']} | {c['correction_turns']} "
            f"({_fmt(share)}) | {c['questions']} |"
        )
    lines += [
        "",
        f"Routing on (pcm) against off ({off}: every turn to maintenance), over all conversations and over "
        "those no shipped model was fitted on; PCM minus routing off question by question (mean, 95% paired "
        "bootstrap interval, questions it wins / loses):",
        "",
        f"| conversations | turns | routed to correction | of the first 100 turns of each | questions "
        f"| pcm recall@10 | {off} recall@10 | pcm − routing off, recall@10 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, group in (("all", routing["all"]), ("no model fitted on them", routing["not_fitted_on"])):
        gap = group["pcm_minus_routing_off"]["recall@10"]
        lead = (
            f"{gap['difference']:+.3f} [{gap['ci95'][0]:+.3f}, {gap['ci95'][1]:+.3f}] {gap['better']}/{gap['worse']}"
            if gap.get("difference") is not None
            else "n/a"
        )
        lines.append(
            f"| {label} ({', '.join(group['conversations']) or 'none'}) | {group['turns']} | "
            f"{group['correction_turns']} ({_fmt(group['correction_share'])}) | "
            f"{group.get('first_turns_corrected', 'n/a')} of {group.get('first_turns', 'n/a')} "
            f"({_fmt(group.get('first_turns_correction_share'))}) | {group['questions']} | "
            f"{_fmt(group['recall']['pcm']['recall@10'])} | {_fmt(group['recall'][off]['recall@10'])} | "
            f"{lead} |"
        )
    return lines


def _qa_lines(qa: dict) -> list[str]:
    """QA metrics per category (category 5 is scored on abstaining), or why there are none."""
    if "skipped" in qa:
        return [f"QA: skipped — {qa['skipped']}"]
    metrics = [
        m for m in ("exact_match", "token_f1", "contains_match", "numeric_match", "llm_judge", "abstained") if m in qa
    ]
    lines = [
        "QA (answers from PCM's top-10 memories; category 5 scored on abstaining):",
        "",
        "| category | count | " + " | ".join(metrics) + " |",
        "|---" * (len(metrics) + 2) + "|",
        "| all | " + f"{qa['count']} | " + " | ".join(_fmt(qa.get(m)) for m in metrics) + " |",
    ]
    for category, m in qa.get("per_category", {}).items():
        lines.append(f"| {category} | {m['count']} | " + " | ".join(_fmt(m.get(k)) for k in metrics) + " |")
    return lines


def _plot_weight_trajectories(records: list[dict], path: Path) -> None:
    """One panel per expected level; x = turns before the probe (0 = the probe)."""
    if not records:
        return
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4), sharey=True)
    for axis, level in zip(axes, LEVELS):
        for record in (r for r in records if r["expected"] == level):
            steps = list(range(1 - len(record["trajectory"]), 1))
            for key, style in (("current", "-"), ("outdated", "--")):
                values = [point[key] for point in record["trajectory"]]
                if any(v is not None for v in values):
                    axis.plot(
                        steps,
                        [float("nan") if v is None else v for v in values],
                        style,
                        alpha=0.5,
                        color=COLOURS["low"] if key == "current" else COLOURS["high"],
                        marker=".",
                    )
        axis.set_title(f"expected {level}")
        axis.set_xlabel("turn (0 = probe)")
        axis.set_ylim(0, 1)
    axes[0].set_ylabel("weight")
    axes[0].plot([], [], "-", color=COLOURS["low"], label="holds current")
    axes[0].plot([], [], "--", color=COLOURS["high"], label="holds outdated")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_locomo_report(results: dict, out: Path) -> None:
    """report.md (systems × metrics, per category, cost) and recall_at_k.png."""
    out = Path(out)
    systems = results["systems"]
    metrics = ["recall@1", "recall@5", "recall@10", "recall@20", "session_hit@5", "ndcg@10"]
    lines = [
        f"# LoCoMo retrieval — {results.get('data')}",
        "",
        f"{len(results['conversations'])} conversations ({', '.join(results['conversations'])}), "
        f"{results['questions']} questions (categories 1–4 with evidence), run {results['date']} on "
        f"{results['machine']}. Settings: {results['settings']}.",
        "",
        "| system | " + " | ".join(metrics) + " | seconds |",
        "|---" * (len(metrics) + 2) + "|",
    ]
    for name, m in systems.items():
        lines.append(f"| {name} | " + " | ".join(_fmt(m.get(k)) for k in metrics) + f" | {m.get('seconds')} |")
    categories = sorted({c for m in systems.values() for c in m.get("per_category", {})}, key=str)
    lines += [
        "",
        "Turn-level recall@10 per category:",
        "",
        "| system | " + " | ".join(f"cat {c}" for c in categories) + " |",
        "|---" * (len(categories) + 1) + "|",
    ]
    for name, m in systems.items():
        per = m.get("per_category", {})
        lines.append(f"| {name} | " + " | ".join(_fmt(per.get(c, {}).get("recall@10")) for c in categories) + " |")
    versus = results.get("versus_pcm") or {}
    if versus:
        compared = list(next(iter(versus.values())))
        lines += [
            "",
            "Each system minus PCM, question by question (mean difference, 95% paired bootstrap "
            "interval, questions it wins / loses): an interval holding 0 does not tell the two apart.",
            "",
            "| system | " + " | ".join(compared) + " |",
            "|---" * (len(compared) + 1) + "|",
        ]
        for name, by_metric in versus.items():
            cells = [
                f"{d['difference']:+.3f} [{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}] {d['better']}/{d['worse']}"
                if d.get("difference") is not None
                else "n/a"
                for d in by_metric.values()
            ]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        per_conversation = {
            name: by_metric["recall@10"]["per_group"]
            for name, by_metric in versus.items()
            if (by_metric.get("recall@10") or {}).get("per_group")
        }
        if per_conversation:
            conversations = list(next(iter(per_conversation.values())))
            lines += [
                "",
                "Recall@10, each system minus PCM per conversation (conversations it wins / loses):",
                "",
                "| system | " + " | ".join(conversations) + " | won / lost |",
                "|---" * (len(conversations) + 2) + "|",
            ]
            for name, by_conversation in per_conversation.items():
                values = [by_conversation[c] for c in conversations]
                lines.append(
                    f"| {name} | "
                    + " | ".join(f"{v:+.3f}" for v in values)
                    + f" | {sum(v > 0 for v in values)} / {sum(v < 0 for v in values)} |"
                )
    lines += _routing_lines(results)
    lines += ["", "Cost:", "", "```", *(f"{k}: {v}" for k, v in results["cost"].items()), "```", ""]
    lines += _qa_lines(results["qa"]) + ["", "![recall@k](recall_at_k.png)", ""]
    (out / "report.md").write_text("\n".join(lines), encoding="utf-8")
    fig, axis = plt.subplots(figsize=(6, 4))
    ks = [1, 5, 10, 20]
    for name, m in systems.items():
        axis.plot(
            ks, [m.get(f"recall@{k}") or 0 for k in ks], marker="o", label=name, linewidth=2.5 if name == "pcm" else 1.2
        )
    axis.set_xlabel("k")
    axis.set_ylabel("turn-level recall@k")
    axis.set_title("LoCoMo retrieval")
    axis.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "recall_at_k.png", dpi=110)
    plt.close(fig)


def analyze_runs(runs: list[Path], misses: int = 10) -> str:
    """A text comparison of result folders: metrics side by side, routing, worst misses."""
    import json

    loaded = [(Path(r), json.loads((Path(r) / "results.json").read_text(encoding="utf-8"))) for r in runs]
    lines = []
    for path, results in loaded:
        lines.append(f"== {path} ({results.get('data')}, {results.get('date')})")
        for name, m in results.get("systems", {}).items():
            lines.append(f"  {name:18s} R@10 {_fmt(m.get('recall@10'))}  NDCG@10 {_fmt(m.get('ndcg@10'))}")
        for name, m in results.get("scorers", {}).items():
            lines.append(f"  {name:26s} routing acc {_fmt(m['routing_accuracy'])}  confusion {m['confusion']}")
        for name, records in results.get("records", {}).items():
            values = sorted(r["s_eff"] for r in records)
            if values:
                lines.append(
                    f"  S_eff[{name}] min {values[0]:.3f} median {values[len(values) // 2]:.3f} max {values[-1]:.3f}"
                )
        if results.get("cost", {}).get("agents"):
            lines.append(f"  agents during ingestion: {results['cost']['agents']}")
        for miss in results.get("misses", [])[:misses]:
            lines.append(f"  MISS [{miss['category']}] {miss['question']}")
            for dialog_id, text in miss["evidence"].items():
                lines.append(f"      evidence {dialog_id}: {text[:120]}")
            for text in miss["retrieved_instead"]:
                lines.append(f"      got {text[:140]}")
    return "\n".join(lines)
