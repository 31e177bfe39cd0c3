"""One small class per router behind one interface: `Router.decide(turn) -> Decision`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pcm.config import PCMContext
from pcm.cues import tells_onset
from pcm.formulas import LEVELS, adapted_level_prior, pair_level
from pcm.life_states import mentions_person, told_of_someone_else
from pcm.llm import RelationJudgement
from pcm.perception.relation import load_relation_model
from pcm.perception.surprise import TurnSignals
from pcm.routing.models import RouterModel, shipped_routers
from pcm.speech_acts import asks_only, corrects_itself, is_request, states_nothing

#: the evolution branch of each level
BRANCH_OF_LEVEL = {"high": "correction", "medium": "profiling", "low": "maintenance"}
#: the level an LLM's (or a perfect judge's) relation verdict routes to
LEVEL_OF_RELATION = {"consistent": "low", "novel": "medium", "contradiction": "high"}


@dataclass
class Decision:
    """A router's answer: the level (None: S_eff against θ_low/θ_high decides), what decided it,
    the level probabilities it read, and the LLM judgement it asked for, if any."""

    level: str | None
    source: str
    probabilities: dict[str, float] = field(default_factory=dict)
    judgement: RelationJudgement | None = None
    #: the cue router's class-balanced P(low, medium, high) of a turn the calibrated router saw, from
    #: which the user's own level prior is estimated (`pcm.formulas.adapted_level_prior`)
    posterior: list[float] | None = None


class Router:
    """Decides a turn's level. Every router but `off` first applies the guards, then reads a "low" turn that
    tells something just begun or acquired as new (medium), and last keeps a turn that only asks, a change
    told of someone else, an answer to the other party's question, or a turn that would revise only what
    its speaker said earlier in the same dialogue episode, from correcting."""

    def decide(self, turn: TurnSignals) -> Decision:
        if not turn.memories:
            return Decision("low", "empty-retrieval")
        if is_request(turn.text):
            return Decision("low", "request")
        if states_nothing(turn.text):  # "hi", "谢谢啦": nothing to revise or to learn, whatever its pair verdicts read
            return Decision("low", "states-nothing")
        # "Cool! What position are you playing for the team?" asks about the team, it states nothing to revise
        asking = asks_only(turn.text)
        if turn.clashing and not asking:  # the turn's life state excludes a stored one (`pcm.life_states`)
            return Decision("high", "life-state")
        decision = self.level(turn)
        # "Just bought a secondhand campervan!" resembles the user's van trips: similarity reads it as
        # known, but what has just begun or been acquired is new
        if decision.level == "low" and tells_onset(turn.text):
            return Decision("medium", "onset", decision.probabilities)
        if decision.level == "high":
            if asking:
                return Decision("low", "question", decision.probabilities)
            # "My brother sold his motorbike" revises nothing of the speaker's ("I ride a Ninja 650"),
            # only what was said of the brother: a new fact about him, unless a memory names him
            person = told_of_someone_else(turn.text)
            if person and not any(mentions_person(m.content, person) for m in turn.memories):
                return Decision("medium", "someone-else", decision.probabilities)
            # "Which team did you sign with?" → "The Minnesota Wolves!": an answer develops what it was
            # asked about ("I just signed with a new team"); one that tells a change itself may revise it
            if turn.answers_question and decision.source != "llm" and not turn.signals.get("change_cues"):
                return Decision("medium", "answer", decision.probabilities)
            # "I used to compete in dance competitions", ten turns after "Dance is my go-to for stress
            # relief": a speaker does not revise what they told minutes ago in the same conversation,
            # unless they say so ("Sorry, I meant Portland")
            if decision.source != "llm" and not corrects_itself(turn.text) and turn.revises_this_episode():
                return Decision(_safer_level(decision.probabilities), "same-episode", decision.probabilities)
        return decision

    def level(self, turn: TurnSignals) -> Decision:
        raise NotImplementedError


class OffRouter(Router):
    """Every turn to maintenance (the ablation of routing)."""

    def decide(self, turn: TurnSignals) -> Decision:
        return Decision("low", "routing-off")


class ThresholdRouter(Router):
    """No level of its own: S_eff against θ_low/θ_high decides (`SurpriseMonitor`)."""

    def level(self, turn: TurnSignals) -> Decision:
        return Decision(None, "threshold")


class CalibratedRouter(Router):
    """The cascade of the cheap router, the full router (with the LM's signals) and the LLM."""

    def __init__(self, cheap: RouterModel | None, full: RouterModel | None, confidence: float, uncued_memories: int):
        """`uncued_memories`: an uncued "high" is trusted only while the user holds fewer memories
        (`uncued_correction_memories`)."""
        self.cheap, self.full, self.confidence = cheap, full, confidence
        self.uncued_memories = uncued_memories

    def level(self, turn: TurnSignals) -> Decision:
        probabilities: dict[str, float] = {}
        cued = turn.signals.get("change_cues", 0.0) > 0 or turn.signals.get("exclusive_cues", 0.0) > 0
        if self.cheap is not None:
            probabilities = self.cheap.probabilities(turn.signals, turn.prior)
            best = max(probabilities, key=probabilities.get)
            # a correction on no cue of change rests on the pair verdicts alone, which long histories show
            # confidently wrong ("F和弦到现在还按不响" retiring "我在学吉他"): the full stage adds the LM's surprise
            if probabilities[best] >= self.confidence and (best != "high" or cued):
                return Decision(best, "calibrated-cheap", probabilities)
        if self.full is None:
            return Decision(None, "threshold", probabilities)
        turn.add_language_model_signals()
        probabilities = self.full.probabilities(turn.signals, turn.prior)
        level = max(probabilities, key=probabilities.get)
        # among many memories the nearest "contradicted" fact is mostly a compatible neighbour ("I live in
        # Denver" against "I grew up in Ohio"): there an uncued "high" is unsure
        trusted = level != "high" or cued or turn.memory_size < self.uncued_memories
        if probabilities[level] >= self.confidence and trusted:
            return Decision(level, "calibrated", probabilities)
        judgement = turn.ask_llm(turn.memories)
        if judgement is not None:
            return Decision(LEVEL_OF_RELATION[judgement.relation], "llm", probabilities, judgement)
        if level == "high":  # unsure, and a correction decays memories: the safer level
            return Decision(_safer_level(probabilities), "calibrated-cautious", probabilities)
        return Decision(level, "calibrated", probabilities)


class PairRouter(Router):
    """`pcm.formulas.pair_level` over the relation model's verdicts; the LLM judges unsure pairs."""

    def __init__(self, relation_model_path: Path, confidence: float):
        self.relation_model_path, self.confidence = relation_model_path, confidence

    def level(self, turn: TurnSignals) -> Decision:
        if not turn.relations:
            if not self.relation_model_path.is_file():
                raise FileNotFoundError(f"router 'pair' needs a relation model at {self.relation_model_path}")
            return Decision("low", "no-own-facts")
        tau = load_relation_model(self.relation_model_path).thresholds
        signals = turn.signals
        contradiction, consistent = signals["relation_contradiction"], signals["relation_consistent"]
        level = pair_level(
            contradiction, consistent, signals.get("cue_router_high", 0.0), tau.contradiction, tau.consistent, tau.cue
        )
        probabilities = {"high": contradiction, "low": consistent, "medium": signals["relation_novel"]}
        confidence = {"high": contradiction, "low": consistent, "medium": 1.0 - max(contradiction, consistent)}[level]
        if confidence < self.confidence:
            judgement = turn.ask_llm([m for m in turn.memories if m.id in turn.relations])
            if judgement is not None:
                return Decision(LEVEL_OF_RELATION[judgement.relation], "llm", probabilities, judgement)
        return Decision(level, "pair", probabilities)


def _safer_level(probabilities: dict[str, float]) -> str:
    """The likelier of the two levels that decay nothing (low without probabilities)."""
    return max(("low", "medium"), key=lambda level: probabilities.get(level, 0.0))


def router_for(ctx: PCMContext) -> Router:
    """The router the settings name (`router`), over the shipped fits of `ctx`'s files."""
    if ctx.router == "off":
        return OffRouter()
    if ctx.router == "pair":
        return PairRouter(ctx.relation_model_path, ctx.cascade_confidence)
    if ctx.router == "calibrated":
        return CalibratedRouter(
            *shipped_routers(ctx.calibration_path), ctx.cascade_confidence, ctx.uncued_correction_memories
        )
    return ThresholdRouter()


def decide(turn: TurnSignals, ctx: PCMContext) -> Decision:
    """The turn's level by the router the settings name. Every router but `threshold` first reads
    the cue router's class-balanced posterior (`cue_router_high`, a signal of the pair router), when
    the calibration file has one."""
    cheap = shipped_routers(ctx.calibration_path)[0] if ctx.router != "threshold" else None
    balanced = cheap.probabilities(turn.signals) if cheap else {}
    if balanced:
        turn.signals["cue_router_high"] = balanced["high"]
    decision = router_for(ctx).decide(turn)
    unrouted = ("empty-retrieval", "request", "states-nothing")  # turns the router never read
    if balanced and ctx.router == "calibrated" and decision.source not in unrouted:
        decision.posterior = [round(balanced[c], 4) for c in LEVELS]
    return decision


def user_level_prior(memory, ctx: PCMContext) -> list[float] | None:
    """The calibrated router's level prior for the user whose `memory` this is: the share of each
    level among their stated facts' router posteriors, shrunk to `level_prior`
    (`pcm.formulas.adapted_level_prior`); None (the configured prior) for other routers or with
    `level_prior_turns` 0."""
    if ctx.router != "calibrated" or ctx.level_prior_turns <= 0:
        return None
    return adapted_level_prior(
        memory.router_posteriors(), ctx.level_prior_turns, ctx.level_prior, ctx.level_prior_iterations
    )


def branch_of_level(state: dict) -> str:
    """The graph's conditional edge: the branch of the level the turn's router decided in `perceive`."""
    return BRANCH_OF_LEVEL[state["surprisal"]["level"]]
