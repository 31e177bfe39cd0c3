"""Belief-revision scenarios: does PCM route each probe right, and does the current fact win?

For each scenario: fresh memory (its own user namespace), replay `history`, process
`probe`, record S_raw, H(C), S_eff and the level taken; then retrieve for `query` and
check that the best memory containing `current` ranks above every memory containing
`outdated`. The plain dense baseline (MiniLM over the raw messages) is scored on the
same check in the same run. When the probe is corrected, the memories it superseded are
kept, to score whether the right one (holding `outdated`) was retired.
"""

from __future__ import annotations

import json
import logging
import tempfile
from bisect import bisect_right
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
from langgraph.checkpoint.memory import InMemorySaver
from tqdm import tqdm

from evals.bench.processes import refuse_given_chat_model, results_in_processes
from evals.jsonl import numbered_records
from pcm.api import PCM
from pcm.config import PCMContext
from pcm.formulas import LEVELS
from pcm.models import RETRIEVABLE_TYPES, NodeType
from pcm.routing import LEVEL_OF_RELATION
from pcm.services import Services

logger = logging.getLogger(__name__)
REQUIRED = ("id", "history", "probe", "expected_level", "query", "current")


def scenario_files(path: str | Path) -> list[Path]:
    """The JSONL files `path` names: itself, or every `*.jsonl` in a folder."""
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.jsonl"))
        if not files:
            raise FileNotFoundError(f"no *.jsonl scenario file in {path}")
        return files
    if not path.is_file():
        raise FileNotFoundError(f"no scenario file at {path}")
    return [path]


def load_scenarios(path: str | Path) -> list[dict]:
    """Read a scenarios JSONL file, or every one in a folder; a malformed line is an error naming it."""
    rows = []
    for file in scenario_files(path):
        rows.extend(_read_scenario_file(file))
    return rows


def _read_scenario_file(path: Path) -> list[dict]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = [k for k in REQUIRED if k not in row]
        if missing or row["expected_level"] not in LEVELS:
            raise ValueError(f"{path}:{number}: bad scenario (missing {missing} or unknown level)")
        problem = session_problem(row)
        if problem:
            raise ValueError(f"{path}:{number}: bad sessions: {problem}")
        rows.append(row)
    return rows


def session_problem(row: dict) -> str | None:
    """What is wrong with a scenario's sessions, if anything: `session_starts` (the index of each
    session's first history message: 0 first, increasing, inside the history) and `session_dates`
    (ISO dates, one per session, not going back) come together or not at all."""
    starts, dates = row.get("session_starts"), row.get("session_dates")
    if starts is None and dates is None:
        return None
    if not isinstance(starts, list) or not isinstance(dates, list) or len(starts) != len(dates) or not starts:
        return "session_starts and session_dates must be lists of the same non-zero length"
    if starts[0] != 0 or any(b <= a for a, b in zip(starts, starts[1:])) or starts[-1] >= len(row["history"]):
        return f"session_starts {starts} must start at 0, increase and lie inside the history"
    try:
        days = [date.fromisoformat(d) for d in dates]
    except (TypeError, ValueError):
        return f"session_dates {dates} must be ISO dates (YYYY-MM-DD)"
    if any(b < a for a, b in zip(days, days[1:])):
        return f"session_dates {dates} must not go back in time"
    return None


def translated_queries(rows: list[dict], data: str | Path, queries: str | Path) -> list[dict]:
    """The scenarios with each query replaced by its translation in `queries` (JSONL of {"file",
    "id", "query"}, `file` the scenario file's name): the cross-lingual check asks about memories in
    one language in the other. A scenario without a translation keeps its query; a translation of
    no scenario in `data` is an error (a mismatched file would measure nothing)."""
    names = {f.name for f in scenario_files(data)}
    wanted: dict[str, str] = {}
    for number, record in numbered_records(queries):
        if not {"file", "id", "query"} <= set(record) or not str(record["query"]).strip():
            raise ValueError(f"{queries}:{number}: a translation needs file, id and a non-empty query")
        if record["file"] in names:
            wanted[record["id"]] = record["query"]
    unknown = set(wanted) - {row["id"] for row in rows}
    if unknown:
        raise ValueError(f"{queries}: translations of scenarios not in {data}: {sorted(unknown)[:5]}")
    if not wanted:
        raise ValueError(f"{queries}: no translation for a scenario of {data}")
    return [{**row, "query": wanted.get(row["id"], row["query"]), "translated": row["id"] in wanted} for row in rows]


def _rank_of(contents: list[str], needle: str | None) -> int | None:
    if not needle:
        return None
    needle = needle.lower()
    return next((i for i, text in enumerate(contents) if needle in text.lower()), None)


def current_wins(contents: list[str], current: str, outdated: str | None) -> bool:
    """True when a memory holding `current` ranks above every memory holding `outdated`."""
    current_rank = _rank_of(contents, current)
    if current_rank is None:
        return False
    outdated_rank = _rank_of(contents, outdated)
    return outdated_rank is None or current_rank < outdated_rank


#: the retrieval mechanisms left out one at a time, as `PCM.search` options: bench-scenarios asks each
#: high scenario's query again without each (same replay, same memory), bench-locomo scores each
#: as a system (`pcm-no-*`); expansion is what places a successor above what it supersedes (and a
#: contesting statement above what it contests: `no-contests` leaves out only that)
SEARCH_ABLATIONS = {
    "no-intent": {"use_intent": False},
    "no-weights": {"use_weights": False},
    "no-expansion": {"expand": False},
    "no-contests": {"use_contests": False},
    "no-time": {"use_time": False},
    "no-answer-type": {"use_answer_type": False},
}


@dataclass
class ScenarioRecord:
    id: str
    lang: str
    expected: str
    level: str
    level_source: str
    s_raw: float
    retrieval_entropy: float
    s_eff: float
    signals: dict
    current_over_outdated: bool | None
    dense_current_over_outdated: bool | None
    weights: dict
    trajectory: list[dict]
    llm_calls: int = 0
    superseded: list[str] | None = None
    outdated: str | None = None
    kind: str | None = None
    current_over_outdated_ablated: dict[str, bool] | None = None
    standing_first: bool | None = None
    dense_standing_first: bool | None = None
    standing_first_ablated: dict[str, bool] | None = None
    level_probabilities: dict | None = None
    pair_verdict_level: str | None = None
    #: history turns routed to correction: a false alarm, a scenario's one revision being its probe
    history_corrected: int = 0
    history_turns: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def dense_baseline_contents(services: Services, messages: list[str], query: str) -> list[str]:
    vectors = services.embedder.encode(messages)
    order = np.argsort(-(vectors @ services.embedder.encode_one(query)))
    return [messages[i] for i in order]


#: when a replayed scenario's first message is said (each next one a second later). A memory is
#: indexed with its date ("[5 January 2026] …", `pcm.world.representation`), so replaying at the
#: wall clock made every similarity, and some routings, depend on the day a benchmark ran (a test
#: probe flipped from medium to low between two days' runs of the same code)
REPLAY_START = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


def relation_without_cue_path(model: Path, out: Path) -> Path:
    """A copy of the relation model whose thresholds are those chosen without the cue path (ablation)."""
    spec = json.loads(model.read_text(encoding="utf-8"))
    spec["thresholds"] = spec.get("thresholds_without_cue_path") or {**spec.get("thresholds", {}), "cue": 1.01}
    out.mkdir(parents=True, exist_ok=True)
    path = out / "relation-without-cue-path.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return path


def pair_verdict_level(relations: dict[str, dict[str, float]] | None) -> str:
    """The level the relation model's verdict alone gives: its likeliest relation with the judged
    memory the input is most about (the largest P(consistent) + P(contradiction)); "medium" when
    no memory was judged. Scored beside the router (`pair_verdict_accuracy`), it says how much of
    the routing error is already in the pair verdicts."""
    if not relations:
        return "medium"
    verdict = max(relations.values(), key=lambda v: v["consistent"] + v["contradiction"])
    return LEVEL_OF_RELATION[max(verdict, key=verdict.get)]


def replay_moment(index: int, scenario: dict | None = None) -> str:
    """The timestamp of a scenario's `index`-th message (0-based) in a replay: a second after the
    message before it, from `REPLAY_START`; in a scenario told over sessions (`session_starts`,
    `session_dates`), a second after its session's start, which is the session's date at
    `REPLAY_START`'s time of day. The probe closes the last session. Told weeks apart, a session's
    first turn has no preceding context and unconfirmed hypotheses decay in between, as in use."""
    starts = (scenario or {}).get("session_starts")
    if not starts:
        return (REPLAY_START + timedelta(seconds=index)).isoformat()
    session = bisect_right(starts, index) - 1
    began = datetime.combine(date.fromisoformat(scenario["session_dates"][session]), REPLAY_START.timetz())
    return (began + timedelta(seconds=index - starts[session])).isoformat()


def run_scenarios(
    scenarios: list[dict], ctx: PCMContext, services: Services | None = None, progress: bool = True, workers: int = 1
) -> list[ScenarioRecord]:
    """Replay every scenario in its own user namespace of a temporary data directory, on a fixed
    clock (`REPLAY_START`), so the same code gives the same records on any day. With `workers` > 1
    the scenarios are replayed in that many processes (`replay_in_processes`)."""
    if workers < 1:
        raise ValueError("workers must be at least 1")
    if workers > 1 and len(scenarios) > 1:
        return replay_in_processes(scenarios, ctx, services, progress, workers)
    records = []
    with tempfile.TemporaryDirectory(prefix="pcm-scenarios-") as folder:
        ctx = ctx.replace(data_dir=folder)
        services = Services(ctx) if services is None else services.with_context(ctx)
        pcm = PCM(ctx, services, checkpointer=InMemorySaver())
        for scenario in tqdm(
            scenarios, desc=f"scenarios ({ctx.scorer}/{ctx.router})", disable=None if progress else True
        ):
            user = f"scenario-{scenario['id']}"
            trajectory, history_corrected = [], 0
            for index, message in enumerate([*scenario["history"], scenario["probe"]]):
                out = pcm.process(message, user_id=user, timestamp=replay_moment(index, scenario))
                trajectory.append(_tracked_weights(pcm.memory(user), scenario))
                history_corrected += index < len(scenario["history"]) and out.get("agent") == "correction"
            packet = out["surprisal"]
            found = pcm.search(scenario["query"], user_id=user, top_k=20)
            contents = [m.content for m in found]
            is_high = scenario["expected_level"] == "high" and scenario.get("outdated")
            is_low = scenario["expected_level"] == "low"
            dense = dense_baseline_contents(services, [*scenario["history"], scenario["probe"]], scenario["query"])
            without = {
                name: [m.content for m in pcm.search(scenario["query"], user_id=user, top_k=20, **options)]
                for name, options in (SEARCH_ABLATIONS.items() if is_high or is_low else ())
            }
            ablated = (
                {
                    name: current_wins(found, scenario["current"], scenario.get("outdated"))
                    for name, found in without.items()
                }
                if is_high
                else None
            )
            graph = pcm.memory(user)
            records.append(
                ScenarioRecord(
                    id=scenario["id"],
                    lang=scenario.get("lang", "en"),
                    expected=scenario["expected_level"],
                    level=packet["level"],
                    level_source=packet["level_source"],
                    s_raw=packet["s_raw"],
                    retrieval_entropy=packet["retrieval_entropy"],
                    s_eff=packet["s_eff"],
                    signals=packet["signals"],
                    current_over_outdated=current_wins(contents, scenario["current"], scenario.get("outdated"))
                    if is_high
                    else None,
                    dense_current_over_outdated=current_wins(dense, scenario["current"], scenario.get("outdated"))
                    if is_high
                    else None,
                    weights={n.content[:80]: round(n.weight, 4) for n in graph.nodes(types=RETRIEVABLE_TYPES)},
                    trajectory=trajectory,
                    llm_calls=(out.get("llm_usage") or {}).get("calls", 0),
                    superseded=superseded_by(graph, out["changes"][0]["node_id"])
                    if out.get("agent") == "correction"
                    else None,
                    outdated=scenario.get("outdated"),
                    kind=scenario.get("kind"),
                    current_over_outdated_ablated=ablated,
                    standing_first=standing_first(contents, scenario) if is_low else None,
                    dense_standing_first=standing_first(dense, scenario) if is_low else None,
                    standing_first_ablated={name: standing_first(found, scenario) for name, found in without.items()}
                    if is_low
                    else None,
                    level_probabilities=packet.get("level_probabilities") or None,
                    pair_verdict_level=pair_verdict_level(packet.get("relations")),
                    history_corrected=int(history_corrected),
                    history_turns=len(scenario["history"]),
                )
            )
    return records


#: scenarios per task of a parallel replay: small enough to balance two workers, large enough that
#: a task's set-up (a temporary data directory, a graph) is a small part of it
REPLAY_BATCH = 8


def replay_in_processes(
    scenarios: list[dict], ctx: PCMContext, services: Services | None, progress: bool, workers: int
) -> list[ScenarioRecord]:
    """`run_scenarios` over `workers` processes (`evals.bench.processes`). Each scenario is its own user
    on a fixed clock, so the records are those of one process, in the order given: the same
    decisions, and numbers equal to 1e-6 (texts embedded in other batches differ in the last bits;
    `make bench-scenarios` on dev3 measured it, see the log)."""
    refuse_given_chat_model(services)
    batches = [scenarios[start : start + REPLAY_BATCH] for start in range(0, len(scenarios), REPLAY_BATCH)]
    replayed = results_in_processes(
        run_scenarios,
        [(batch, ctx, None, False) for batch in batches],
        workers,
        f"scenarios ({ctx.scorer}/{ctx.router}, {workers} processes)",
        progress,
        sizes=[len(batch) for batch in batches],
    )
    return [record for records in replayed for record in records]


def _ablated_shares(outcomes: list[dict[str, bool] | None]) -> dict[str, float]:
    """For each search ablation, the share of its measured scenarios it got right."""
    return {
        name: float(np.mean(wins))
        for name in SEARCH_ABLATIONS
        if (wins := [found[name] for found in outcomes if name in (found or {})])
    }


def standing_first(contents: list[str], scenario: dict) -> bool:
    """True when the first memory found for a "low" scenario's query holds its `current` value: the
    fact that is still true was not pushed down by the consistent turn (nor retired)."""
    return _rank_of(contents, scenario["current"]) == 0


def superseded_by(graph, node_id: str) -> list[str]:
    """The contents of the memories that `node_id` supersedes."""
    return [graph.node(e.target).content for e in graph.edges() if e.source == node_id and e.relation == "supersedes"]


def _tracked_weights(graph, scenario: dict) -> dict:
    """Weights, after one turn, of the first stored message holding `current` and of the one
    holding `outdated` (None while there is none)."""
    found: dict = {"current": None, "outdated": None}
    for node in sorted(graph.nodes(types=[NodeType.FACT]), key=lambda n: n.created_at):
        for key in found:
            needle = scenario.get(key)
            if found[key] is None and needle and needle.lower() in node.content.lower():
                found[key] = round(node.weight, 4)
    return found


def holds(content: str, needle: str | None) -> bool:
    return bool(needle) and needle.lower() in content.lower()


def supersession_metrics(records: list[ScenarioRecord]) -> dict:
    """How corrections chose what to retire, and how often a statement that revises nothing was corrected.

    - supersession_hit_rate: of the "high" scenarios (with an `outdated` value) whose probe was
      corrected, the share whose superseded memories include the one holding `outdated` (issue 8's
      "supersession precision");
    - supersession_precision: of all memories superseded on those probes, the share holding `outdated`;
    - false_alarms_low: the share of "low" scenarios routed to correction (and of those marked
      `kind: trap`, when a file marks them);
    - history_correction_share: the share of history turns routed to correction. A history holds no
      revision (the probe is the scenario's one), so each is a false alarm, and what it supersedes is
      a still-true memory the scenario's query may ask for.
    """
    corrected = [r for r in records if r.expected == "high" and r.outdated and r.superseded is not None]
    superseded = [holds(c, r.outdated) for r in corrected for c in r.superseded]
    lows = [r for r in records if r.expected == "low"]
    traps = [r for r in lows if r.kind == "trap"]
    history_corrected, history_turns = sum(r.history_corrected for r in records), sum(r.history_turns for r in records)
    return {
        "supersession_hit_rate": float(np.mean([any(holds(c, r.outdated) for c in r.superseded) for r in corrected]))
        if corrected
        else None,
        "supersession_precision": float(np.mean(superseded)) if superseded else None,
        "corrected_high_probes": len(corrected),
        "superseded_memories": len(superseded),
        "false_alarms_low": float(np.mean([r.level == "high" for r in lows])) if lows else None,
        "false_alarms_trap": float(np.mean([r.level == "high" for r in traps])) if traps else None,
        "history_turns_corrected": history_corrected,
        "history_correction_share": history_corrected / history_turns if history_turns else None,
    }


def _share(flags: list[bool | None]) -> float | None:
    """The share of True among the flags that are not None (None when all are)."""
    known = [f for f in flags if f is not None]
    return float(np.mean(known)) if known else None


def routing_metrics(records: list[ScenarioRecord]) -> dict:
    """3-way accuracy, macro-F1, confusion matrix (rows expected, columns taken; low/medium/high),
    the accuracy of the relation model's verdict alone (`pair_verdict_level`),
    current-over-outdated per language (PCM and the dense baseline), supersession, false alarms, and
    on "low" scenarios how often the still-true fact is the first memory found (`standing_first`)."""
    index = {level: i for i, level in enumerate(LEVELS)}
    confusion = np.zeros((3, 3), dtype=int)
    for r in records:
        confusion[index[r.expected], index[r.level]] += 1
    f1s = []
    for i in range(3):
        tp = confusion[i, i]
        precision = tp / confusion[:, i].sum() if confusion[:, i].sum() else 0.0
        recall = tp / confusion[i, :].sum() if confusion[i, :].sum() else 0.0
        f1s.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    languages = sorted({r.lang for r in records})
    revisions = [r.current_over_outdated for r in records if r.current_over_outdated is not None]
    dense = [r.dense_current_over_outdated for r in records if r.dense_current_over_outdated is not None]
    return {
        "routing_accuracy": float(np.trace(confusion) / max(1, confusion.sum())),
        "pair_verdict_accuracy": _share(
            [r.pair_verdict_level == r.expected if r.pair_verdict_level else None for r in records]
        ),
        "macro_f1": float(np.mean(f1s)),
        "current_over_outdated": float(np.mean(revisions)) if revisions else None,
        "current_over_outdated_ablated": _ablated_shares([r.current_over_outdated_ablated for r in records]),
        "standing_fact_first_ablated": _ablated_shares([r.standing_first_ablated for r in records]),
        "dense_current_over_outdated": float(np.mean(dense)) if dense else None,
        "standing_fact_first": _share([r.standing_first for r in records]),
        "dense_standing_fact_first": _share([r.dense_standing_first for r in records]),
        "per_language": {
            lang: float(np.mean([r.level == r.expected for r in records if r.lang == lang])) for lang in languages
        },
        "current_over_outdated_per_language": {
            lang: float(np.mean(wins))
            for lang in languages
            if (
                wins := [
                    r.current_over_outdated for r in records if r.lang == lang and r.current_over_outdated is not None
                ]
            )
        },
        "dense_current_over_outdated_per_language": {
            lang: float(np.mean(wins))
            for lang in languages
            if (
                wins := [
                    r.dense_current_over_outdated
                    for r in records
                    if r.lang == lang and r.dense_current_over_outdated is not None
                ]
            )
        },
        **supersession_metrics(records),
        "confusion": confusion.tolist(),
        "llm_calls_per_probe": float(np.mean([r.llm_calls for r in records])) if records else 0.0,
        "level_sources": {
            s: sum(r.level_source == s for r in records) for s in sorted({r.level_source for r in records})
        },
    }
