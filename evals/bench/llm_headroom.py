"""How far LLM mode can go: the scenario replay with a perfect judge in the LLM's place.

With an LLM configured, the routing cascade asks it to judge a turn only when the router is unsure
(`cascade_confidence`). What that can buy depends on two things this module separates: which turns
the cascade asks about, and how often the LLM is right on them. Here the judge is right every time
(it answers each probe with the scenario's own label, naming the memory that holds `outdated` as
contradicted, or the one that holds `current` as supported), so the figures are an upper bound of
LLM mode at each `cascade_confidence`, beside the same replay with the judge asked and answering
nothing (offline). A turn that is not a probe gets no answer either way: no label says what it
should be. Routing with a real LLM right on a share `a` of the probes it is asked lies between:
offline-correct-and-not-asked + a · asked. Run it on dev files only: it reads the labels.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from evals.bench.scenarios import holds, load_scenarios, routing_metrics, run_scenarios
from pcm.config import PCMContext
from pcm.formulas import LEVELS
from pcm.llm import RelationJudgement
from pcm.models import RetrievedMemory
from pcm.perception.surprise import SurpriseMonitor
from pcm.routing import LEVEL_OF_RELATION
from pcm.services import Services

RELATION_OF_LEVEL = {level: label for label, level in LEVEL_OF_RELATION.items()}


class PerfectJudge:
    """Answers the relation of each scenario probe from its label (None: asked, no answer) and
    counts how often it was asked: on any turn, and on probes."""

    def __init__(self, scenarios: Iterable[dict], answers: bool = True):
        self.by_probe = {s["probe"]: s for s in scenarios} if answers else {}
        self.asked = Counter()

    def __call__(self, text: str, memories: list[RetrievedMemory]) -> RelationJudgement | None:
        if not memories:
            return None
        self.asked["turns"] += 1
        scenario = self.by_probe.get(text)
        if scenario is None:
            return None
        self.asked["probes"] += 1
        relation = RELATION_OF_LEVEL[scenario["expected_level"]]
        named = {"contradiction": scenario.get("outdated"), "consistent": scenario.get("current")}.get(relation)
        ids = [m.id for m in memories if named and holds(m.content, named)]
        return RelationJudgement(
            relation=relation,
            conflict_score=1.0 if relation == "contradiction" else 0.0,
            conflicting_ids=ids if relation == "contradiction" else [],
            supported_ids=ids if relation == "consistent" else [],
            reason="scenario label",
        )


class PerfectJudgeMonitor(SurpriseMonitor):
    def __init__(self, judge: PerfectJudge, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.perfect_judge = judge

    def judge(self, text: str, memories: list[RetrievedMemory]) -> RelationJudgement | None:
        return self.perfect_judge(text, memories)


class PerfectJudgeServices(Services):
    """Services whose surprise monitor asks the perfect judge where it would ask the LLM."""

    def __init__(self, ctx: PCMContext, judge: PerfectJudge):
        super().__init__(ctx)
        self.perfect_judge = judge

    def with_context(self, ctx: PCMContext) -> "PerfectJudgeServices":
        return PerfectJudgeServices(ctx, self.perfect_judge)

    def monitor(self, llm) -> SurpriseMonitor:
        return PerfectJudgeMonitor(self.perfect_judge, self.language_model, llm, self.embedder, self.pair_judge)


def measure_headroom(path: str | Path, ctx: PCMContext, confidences: Iterable[float]) -> list[dict]:
    """One row per (`cascade_confidence`, judge answering or not) on the scenario file at `path`."""
    scenarios = load_scenarios(path)
    turns = sum(len(s["history"]) + 1 for s in scenarios)
    rows = []
    for confidence in confidences:
        for answers in (False, True):
            judge = PerfectJudge(scenarios, answers)
            setting = ctx.replace(cascade_confidence=confidence)
            records = run_scenarios(scenarios, setting, PerfectJudgeServices(setting, judge), progress=False)
            metrics = routing_metrics(records)
            rows.append(
                {
                    "file": str(path),
                    "cascade_confidence": confidence,
                    "judge": "perfect" if answers else "offline (asked, no answer)",
                    "routing_accuracy": metrics["routing_accuracy"],
                    "current_over_outdated": metrics["current_over_outdated"],
                    "standing_first": metrics["standing_fact_first"],
                    "low_routed_to_correction": metrics["confusion"][LEVELS.index("low")][LEVELS.index("high")],
                    "asked_turns": judge.asked["turns"],
                    "turns": turns,
                    "asked_probes": metrics["level_sources"].get("llm", 0) if answers else None,
                    "probes": len(records),
                }
            )
    return rows


def headroom_report(rows: list[dict]) -> str:
    lines = [
        "| file | cascade_confidence | judge | routing | current-over-outdated | still-true first | "
        '"low" → correction | judge asked on (turns) | probes it settled |',
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        share = r["asked_turns"] / r["turns"] if r["turns"] else 0.0
        lines.append(
            f"| {Path(r['file']).name} | {r['cascade_confidence']} | {r['judge']} | {r['routing_accuracy']:.3f} | "
            f"{_figure(r['current_over_outdated'])} | {_figure(r['standing_first'])} | "
            f"{r['low_routed_to_correction']} | {r['asked_turns']} of {r['turns']} ({share:.0%}) | "
            f"{'—' if r['asked_probes'] is None else r['asked_probes']} of {r['probes']} |"
        )
    return "\n".join(lines) + "\n"


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"
