"""Routing: the rule that sends a turn to correction (high), profiling (medium) or maintenance (low).

Perception measures the turn's signals (`pcm.perception.surprise`: similarities, cue counts,
the relation model's verdicts on the facts it retrieved, the language model's NLL when asked),
then the router the settings name (`router`) decides the level from them:

- every router but `off` first applies three guards: nothing retrieved → low (there is nothing to
  revise), a question or request to the assistant (`is_request`) → low (it claims nothing), a turn
  that states nothing, only a greeting or thanks (`states_nothing`) → low; and a
  turn that only asks (`asks_only`) never corrects, nor, unless an LLM judged it, one in a dialogue
  between people that would revise only what its speaker said earlier in the same episode
  (`revises_this_episode`);
- `off`: always low (maintenance), the ablation;
- `threshold`: no level of its own; the monitor compares S_eff with θ_low/θ_high;
- `calibrated` (the default): the cheap logistic router over cue and similarity signals
  settles confident turns (a correction only on a cue of change); otherwise the full router adds
  the LM signals (its "high" without a change or exclusive cue is unsure once the user holds
  `uncued_correction_memories` memories); a turn it is still unsure of goes to the LLM when one
  is configured, and without one an unsure "high" falls back to the likelier non-destructive
  level. Both posteriors are re-weighted by the user's own level prior
  (`pcm.formulas.adapted_level_prior`);
- `pair`: `pcm.formulas.pair_level` over the relation model's verdicts, the LLM judging the
  pairs it is unsure of.

The fits it reads ship in `pcm/calibration/` (`default.json`: the two logistic routers and the
thresholds; `relation.json`: the pair thresholds) and are loaded once per file version.
`decide(turn, ctx)` is the whole rule; `branch_of_level` is the graph's conditional edge, which reads
the level `decide` gave the turn in the perceive node.
"""

from pcm.routing.models import RouterModel, shipped_routers
from pcm.routing.routers import (
    BRANCH_OF_LEVEL,
    LEVEL_OF_RELATION,
    CalibratedRouter,
    Decision,
    OffRouter,
    PairRouter,
    Router,
    ThresholdRouter,
    branch_of_level,
    decide,
    router_for,
    user_level_prior,
)

__all__ = [
    "BRANCH_OF_LEVEL",
    "LEVEL_OF_RELATION",
    "CalibratedRouter",
    "Decision",
    "OffRouter",
    "PairRouter",
    "Router",
    "RouterModel",
    "ThresholdRouter",
    "branch_of_level",
    "decide",
    "router_for",
    "shipped_routers",
    "user_level_prior",
]
