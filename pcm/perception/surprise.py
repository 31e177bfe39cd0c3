"""Surprise monitor: S_raw, H(C), S_eff, and the routing level, in one SurprisalPacket.

Scorers (S_raw, each on its own scale, with its own θ_low/θ_high):
- `nll`       mean per-token NLL of the input given retrieved memories and recent turns (the spec);
- `nll_delta` that NLL minus the input's NLL with no context: < 0 when memory supports
              the input, > 0 when memory makes it less likely;
- `hybrid`    α · semantic distance + (1 − α) · conflict score (processing-flow document), the
              conflict score from the LLM when one is configured, else from offline cues.

S_eff = S_raw · (1 − λ·H(C)) is always the reported quantity. The routing level comes
from the `router`: `off` sends every turn to maintenance; `threshold` compares S_eff
with θ_low/θ_high; `calibrated` feeds all signals (cue families from
`pcm.perception.cues`, retrieval similarities, the LM's NLL) to a small multinomial
logistic model fitted by `python -m evals calibrate` (no model in the calibration file
falls back to thresholds) and, in a cascade, asks the LLM (when configured) only about
turns the model is unsure of; `pair` asks the relation model (`pcm.perception.relation`)
how the input relates to each of the few best-matching facts of the same speaker and
routes on its verdicts (`pcm.formulas.pair_level`), the LLM judging the pairs it is
unsure of. Whenever the relation model is available its verdicts are kept in the packet
(`relations`, and the maxima among the signals), so a correction can supersede exactly
the memories judged contradicted.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from pcm.config import PCMContext, load_calibration
from pcm.formulas import (LEVELS, effective_surprisal, hybrid_surprisal, pair_level, retrieval_entropy, softmax,
                          surprise_level)
from pcm.llm import LLMClient, RelationJudgement
from pcm.models import NodeType, RetrievedMemory, SurprisalPacket
from pcm.perception.cues import cue_counts, is_request
from pcm.perception.language_model import CausalLMScorer
from pcm.perception.relation import RELATIONS, load_relation_model
from pcm.prompts import RELATION_SYSTEM, relation_prompt
from pcm.world.embeddings import Embedder
from pcm.world.text import content_words, has_cjk

logger = logging.getLogger(__name__)

CHEAP_FEATURES = ("max_similarity", "similarity_margin", "word_overlap", "retrieval_entropy", "change_cues",
                  "additive_cues", "routine_cues", "exclusive_cues", "negation", "chinese", "conflict")
FEATURES = ("nll", "nll_delta", *CHEAP_FEATURES)
#: the relation model's verdicts (maxima over the judged memories, `relation_signals`): the
#: calibrated router reads them beside the cheap and LM signals
RELATION_FEATURES = tuple(f"relation_{r}" for r in RELATIONS)


def offline_conflict(change_cues: int, negation: int, max_similarity: float) -> float:
    """An offline stand-in for the LLM's conflict score in [0, 1]: change cues about a remembered subject."""
    evidence = 0.6 * change_cues + 0.3 * negation
    return (1.0 - math.exp(-evidence)) * min(1.0, max(0.0, max_similarity) / 0.5)


def raw_surprisal(scorer: str, signals: dict[str, float], alpha: float) -> float:
    """S_raw of one scorer from the measured signals (see the module docstring)."""
    if scorer == "hybrid":
        return hybrid_surprisal(1.0 - signals["max_similarity"], signals["conflict"], alpha)
    return signals[scorer]


class RouterModel:
    """Multinomial logistic regression over the surprise signals, stored as plain JSON numbers."""

    def __init__(self, spec: dict):
        self.features = list(spec["features"])
        self.classes = list(spec["classes"])
        self.mean = np.asarray(spec["mean"], dtype=float)
        self.scale = np.asarray(spec["scale"], dtype=float)
        self.coef = np.asarray(spec["coef"], dtype=float)
        self.intercept = np.asarray(spec["intercept"], dtype=float)

    def probabilities(self, signals: dict[str, float], prior: list[float] | None = None) -> dict[str, float]:
        """P(level | signals). The model is fitted class-balanced (a uniform prior); `prior`
        (low, medium, high) re-weights it for the share of each level expected in use
        (Bayes' rule under label shift: p'(c|x) ∝ p(c|x) · π'(c) / π(c), π uniform)."""
        x = (np.asarray([signals[f] for f in self.features]) - self.mean) / self.scale
        fitted = np.asarray(softmax((self.coef @ x + self.intercept).tolist()))
        if prior is not None:
            shifted = fitted * np.asarray([prior[LEVELS.index(c)] for c in self.classes])
            fitted = shifted / shifted.sum()
        return dict(zip(self.classes, fitted.tolist()))


def judged_facts(memories: list[RetrievedMemory], speaker: str | None, limit: int) -> list[RetrievedMemory]:
    """The memories the relation model judges: the `limit` most similar directly retrieved facts
    of the same speaker (one person's words neither confirm nor revise another's facts)."""
    facts = [m for m in memories if m.via == "search" and m.type == NodeType.FACT
             and m.speaker == speaker]
    return sorted(facts, key=lambda m: -m.similarity)[:limit]


def relation_signals(relations: dict[str, dict[str, float]]) -> dict[str, float]:
    """The maxima over the judged memories of each relation's probability (0 with none judged)."""
    return {f"relation_{r}": max((p[r] for p in relations.values()), default=0.0) for r in RELATIONS}


class SurpriseMonitor:
    def __init__(self, language_model: CausalLMScorer, llm: LLMClient | None = None,
                 embedder: Embedder | None = None):
        self.language_model = language_model
        self.llm = llm
        self.embedder = embedder

    def relations(self, text: str, memories: list[RetrievedMemory], speaker: str | None,
                  ctx: PCMContext) -> dict[str, dict[str, float]]:
        """P(consistent/novel/contradiction) of `text` against each judged memory (`judged_facts`),
        by memory id; {} when no relation model is available (no file, no embedder)."""
        return self.judge_pairs(text, judged_facts(memories, speaker, ctx.relation_top_k), ctx)

    def judge_pairs(self, text: str, memories: list[RetrievedMemory], ctx: PCMContext
                    ) -> dict[str, dict[str, float]]:
        """The relation model's P(consistent/novel/contradiction) of `text` against each of `memories`,
        by memory id; {} when there are none or no relation model is available."""
        if not memories or self.embedder is None or not ctx.relation_model_path.is_file():
            return {}
        model = load_relation_model(ctx.relation_model_path)
        vectors = self.embedder.encode([*(m.content for m in memories), text])
        verdicts = model.judge(vectors[:-1], vectors[-1], [m.content for m in memories], text,
                               encoder_path=self.embedder.model_path)
        return {m.id: verdict for m, verdict in zip(memories, verdicts)}

    def cheap_signals(self, text: str, memories: list[RetrievedMemory]) -> dict[str, float]:
        """Signals that need no language model (CHEAP_FEATURES).

        Similarities are those of the directly retrieved facts (hypotheses restate their
        observation): the best one, its margin over the others (MiniLM's similarities sit
        higher in Chinese, the margin is comparable across languages) and the share of the
        input's words that the best fact already has. Cues are counted by `pcm.perception.cues`.
        """
        searched = [m for m in memories if m.via == "search"]
        facts = [m for m in searched if m.type == NodeType.FACT] or searched
        ranked = sorted(facts, key=lambda m: -m.similarity)
        best = ranked[0].similarity if ranked else 0.0
        others = [m.similarity for m in ranked[1:]]
        words = set(content_words(text))
        known = set(content_words(ranked[0].content)) if ranked else set()
        cues = cue_counts(text)
        return {
            "max_similarity": best,
            "similarity_margin": best - (sum(others) / len(others) if others else 0.0),
            "word_overlap": len(words & known) / len(words) if words else 0.0,
            "retrieval_entropy": retrieval_entropy([m.score for m in memories]),
            "change_cues": float(cues["change"]),
            "additive_cues": float(cues["additive"]),
            "routine_cues": float(cues["routine"]),
            "exclusive_cues": float(cues["exclusive"]),
            "negation": float(cues["negation"]),
            "chinese": float(has_cjk(text)),
            "conflict": offline_conflict(cues["change"], cues["negation"], best),
        }

    def language_model_signals(self, text: str, context: str) -> dict[str, float]:
        """NLL of the input with its context, without it, and their difference (two LM passes)."""
        nll = self.language_model.nll(text, context)
        nll_plain = self.language_model.nll(text, "")
        return {"nll": nll, "nll_plain": nll_plain, "nll_delta": nll - nll_plain}

    def signals(self, text: str, memories: list[RetrievedMemory], recent: str) -> dict[str, float]:
        """Every signal (FEATURES) about how `text` relates to memory."""
        context = _context_text(memories, recent)
        return {**self.language_model_signals(text, context), **self.cheap_signals(text, memories)}

    def judge(self, text: str, memories: list[RetrievedMemory]) -> RelationJudgement | None:
        if self.llm is None or not memories:
            return None
        return self.llm.structured(RelationJudgement, RELATION_SYSTEM, relation_prompt(text, memories))

    def measure(self, text: str, memories: list[RetrievedMemory], recent: str, ctx: PCMContext,
                judgement: RelationJudgement | None = None, speaker: str | None = None,
                level_prior: list[float] | None = None) -> tuple[SurprisalPacket, RelationJudgement | None]:
        """The packet for `text` given the retrieved `memories`, and any LLM judgement made for it.

        Cascade (router `calibrated`): the cheap router settles confident turns without the
        language model when the scorer does not need it (hybrid); otherwise the LM signals
        are added and the full router decides; a turn still uncertain goes to the LLM if one
        is configured, so the LLM is asked only about the ambiguous turns. Without an LLM, an
        uncertain "high" (correction decays memories) falls back to the likelier of the
        non-destructive levels. Router `threshold` compares S_eff with θ_low/θ_high, asking the
        LLM for the hybrid scorer's conflict score on every turn. Router `pair`: `pair_level` over
        the relation model's verdicts; when the decided level's probability is below
        `cascade_confidence` and an LLM is configured, the LLM judges the pairs. The calibrated routers
        re-weight their class-balanced posteriors by `level_prior` (the user's own, see
        `adapted_level_prior`; default the configured one). A question or request to the
        assistant (`is_request`) claims nothing about the user: it is kept as an observation
        (low) and never becomes a hypothesis or a correction.
        """
        context = _context_text(memories, recent)
        signals = self.cheap_signals(text, memories)
        relations = self.relations(text, memories, speaker, ctx)
        signals.update(relation_signals(relations))
        calibration = load_calibration(ctx.calibration_path) if ctx.router != "threshold" else {}
        cheap_router = RouterModel(calibration["router_cheap"]) if calibration.get("router_cheap") else None
        balanced = cheap_router.probabilities(signals) if cheap_router else {}
        if balanced:
            signals["cue_router_high"] = balanced["high"]
        prior = level_prior or ctx.level_prior
        level, source, probabilities = None, "threshold", {}
        if ctx.router == "off":
            level, source = "low", "routing-off"
        elif not memories:
            level, source = "low", "empty-retrieval"
        elif is_request(text):
            level, source = "low", "request"
        elif ctx.router == "pair":
            level, source, probabilities, judgement = self._pair_route(text, memories, relations, signals, ctx,
                                                                       judgement)
        elif ctx.router == "calibrated" and cheap_router:
            probabilities = cheap_router.probabilities(signals, prior)
            best = max(probabilities, key=probabilities.get)
            if probabilities[best] >= ctx.cascade_confidence:
                level, source = best, "calibrated-cheap"
        if level is None and ctx.router == "calibrated" and calibration.get("router"):
            signals.update(self.language_model_signals(text, context))
            probabilities = RouterModel(calibration["router"]).probabilities(signals, prior)
            level, source = max(probabilities, key=probabilities.get), "calibrated"
            if probabilities[level] < ctx.cascade_confidence:
                judgement = judgement or self.judge(text, memories)
                if judgement is not None:
                    level, source = _LEVEL_OF[judgement.relation], "llm"
                elif level == "high":
                    level = max(("low", "medium"), key=probabilities.get)
                    source = "calibrated-cautious"
        if ctx.scorer != "hybrid" and "nll" not in signals:
            signals.update(self.language_model_signals(text, context))
        if level is None and ctx.scorer == "hybrid" and judgement is None:
            judgement = self.judge(text, memories)
        if judgement is not None:
            signals["conflict"] = judgement.conflict_score
        s_raw = raw_surprisal(ctx.scorer, signals, ctx.hybrid_alpha) if memories else 0.0
        entropy = signals["retrieval_entropy"]
        s_eff = effective_surprisal(s_raw, entropy, ctx.surprise_lambda, has_context=bool(memories))
        theta_low, theta_high = ctx.thresholds()
        if level is None:
            level = surprise_level(s_eff, theta_low, theta_high)
        packet = SurprisalPacket(
            content=text, scorer=ctx.scorer, s_raw=s_raw, retrieval_entropy=entropy, s_eff=s_eff,
            theta_low=theta_low, theta_high=theta_high, level=level, level_source=source,
            level_probabilities=probabilities, signals=signals, retrieved_context=[m.id for m in memories],
            relations=relations, level_prior=list(prior) if ctx.router == "calibrated" else None,
            router_posterior=[round(balanced[c], 4) for c in LEVELS] if balanced and ctx.router == "calibrated"
            and source not in ("empty-retrieval", "request") else None)
        return packet, judgement

    def _pair_route(self, text: str, memories: list[RetrievedMemory], relations: dict[str, dict[str, float]],
                    signals: dict[str, float], ctx: PCMContext, judgement: RelationJudgement | None
                    ) -> tuple[str, str, dict[str, float], RelationJudgement | None]:
        """(level, source, level probabilities, judgement) of the pair router."""
        if not relations:
            if not ctx.relation_model_path.is_file():
                raise FileNotFoundError(f"router 'pair' needs a relation model at {ctx.relation_model_path}")
            return "low", "no-own-facts", {}, judgement
        tau = load_relation_model(ctx.relation_model_path).thresholds
        contradiction, consistent = signals["relation_contradiction"], signals["relation_consistent"]
        level = pair_level(contradiction, consistent, signals.get("cue_router_high", 0.0), tau.contradiction,
                           tau.consistent, tau.cue)
        probabilities = {"high": contradiction, "low": consistent, "medium": signals["relation_novel"]}
        confidence = {"high": contradiction, "low": consistent,
                      "medium": 1.0 - max(contradiction, consistent)}[level]
        if confidence < ctx.cascade_confidence and self.llm is not None:
            judged = [m for m in memories if m.id in relations]
            judgement = judgement or self.judge(text, judged)
            if judgement is not None:
                return _LEVEL_OF[judgement.relation], "llm", probabilities, judgement
        return level, "pair", probabilities, judgement


def _context_text(memories: list[RetrievedMemory], recent: str) -> str:
    context = "\n".join(m.content for m in memories)
    return f"{context}\n{recent}" if context and recent else (context or recent)


_LEVEL_OF = {"consistent": "low", "novel": "medium", "contradiction": "high"}
