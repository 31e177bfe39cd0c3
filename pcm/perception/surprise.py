"""Surprise monitor: the turn's signals, S_raw, H(C), S_eff, and the routed level, in one SurprisalPacket.

Scorers (S_raw, each on its own scale, with its own θ_low/θ_high):
- `nll`       mean per-token NLL of the input given retrieved memories and recent turns (the spec);
- `nll_delta` that NLL minus the input's NLL with no context: < 0 when memory supports
              the input, > 0 when memory makes it less likely;
- `hybrid`    α · semantic distance + (1 − α) · conflict score (processing-flow document), the
              conflict score from the LLM when one is configured, else from offline cues.

S_eff = S_raw · (1 − λ·H(C)) is always the reported quantity. `observe` measures what routing
reads (cue families from `pcm.cues`, retrieval similarities, the relation model's
verdicts on the few best-matching facts of the same speaker, and the LM's NLL on request);
the router the settings name (`pcm.routing`) decides the level; `report` computes S_eff and
the packet, with S_eff against θ_low/θ_high where the router left the level open. The relation
verdicts are kept in the packet (`relations`, and their maxima among the signals), so a
correction can supersede exactly the memories judged contradicted.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from pcm.config import PCMContext
from pcm.cues import cue_counts
from pcm.formulas import effective_surprisal, hybrid_surprisal, retrieval_entropy, surprise_level
from pcm.llm import LLMClient, RelationJudgement
from pcm.models import NodeType, RetrievedMemory, SurprisalPacket
from pcm.perception.language_model import CausalLMScorer
from pcm.perception.relation import RELATIONS, PairJudge
from pcm.prompts import RELATION_SYSTEM, relation_prompt
from pcm.world.embeddings import Embedder
from pcm.world.text import content_words, has_cjk

logger = logging.getLogger(__name__)

CHEAP_FEATURES = (
    "max_similarity",
    "similarity_margin",
    "word_overlap",
    "retrieval_entropy",
    "change_cues",
    "additive_cues",
    "routine_cues",
    "exclusive_cues",
    "negation",
    "chinese",
    "conflict",
)
FEATURES = ("nll", "nll_delta", *CHEAP_FEATURES)
#: the relation model's verdicts (maxima over the judged memories, `relation_signals`): the
#: calibrated router reads them beside the cheap and LM signals
RELATION_FEATURES = tuple(f"relation_{r}" for r in RELATIONS)
#: the verdict on a memory whose life state the turn excludes (`pcm.life_states`)
LIFE_STATE_VERDICT = {"consistent": 0.0, "novel": 0.0, "contradiction": 1.0}


def offline_conflict(change_cues: int, negation: int, max_similarity: float) -> float:
    """An offline stand-in for the LLM's conflict score in [0, 1]: change cues about a remembered subject."""
    evidence = 0.6 * change_cues + 0.3 * negation
    return (1.0 - math.exp(-evidence)) * min(1.0, max(0.0, max_similarity) / 0.5)


def raw_surprisal(scorer: str, signals: dict[str, float], alpha: float) -> float:
    """S_raw of one scorer from the measured signals (see the module docstring)."""
    if scorer == "hybrid":
        return hybrid_surprisal(1.0 - signals["max_similarity"], signals["conflict"], alpha)
    return signals[scorer]


def judged_facts(memories: list[RetrievedMemory], speaker: str | None, limit: int) -> list[RetrievedMemory]:
    """The memories the relation model judges: the `limit` most similar directly retrieved facts
    of the same speaker (one person's words neither confirm nor revise another's facts)."""
    facts = [m for m in memories if m.via == "search" and m.type == NodeType.FACT and m.speaker == speaker]
    return sorted(facts, key=lambda m: -m.similarity)[:limit]


def relation_signals(relations: dict[str, dict[str, float]]) -> dict[str, float]:
    """The maxima over the judged memories of each relation's probability (0 with none judged)."""
    return {f"relation_{r}": max((p[r] for p in relations.values()), default=0.0) for r in RELATIONS}


@dataclass
class TurnSignals:
    """Perception's measurements of one turn, as routing reads them. `signals` holds the cheap ones
    and the relation verdicts' maxima; `add_language_model_signals` adds the LM's (two forward
    passes, so only what needs them asks); `ask_llm` asks the LLM how the input relates to the
    given memories (None offline or when it fails); `prior` is the level prior (low, medium, high)."""

    text: str
    memories: list[RetrievedMemory]
    signals: dict[str, float]
    relations: dict[str, dict[str, float]]
    prior: list[float]
    add_language_model_signals: Callable[[], None]
    ask_llm: Callable[[list[RetrievedMemory]], RelationJudgement | None]
    #: the memories whose life state the turn excludes (`pcm.life_states`): a correction's suspects
    clashing: list[str] = field(default_factory=list)
    #: the turn answers the other party's question (`replies_to_question`): it develops what was asked about
    answers_question: bool = False
    #: whether, in a dialogue, what the turn would correct was all said by its speaker earlier in the same
    #: episode (`pcm.nodes.perception`): someone telling their story, not revising it; asked of "high" turns only
    revises_this_episode: Callable[[], bool] = lambda: False
    #: how many memories the user holds (`uncued_correction_memories`)
    memory_size: int = 0


class SurpriseMonitor:
    def __init__(
        self,
        language_model: CausalLMScorer,
        llm: LLMClient | None,
        embedder: Embedder | None,
        pair_judge: Callable[[PCMContext], PairJudge],
    ):
        """`pair_judge(ctx)`: the relation model `ctx` names over the encoders it reads
        (`Services.pair_judge`)."""
        self.language_model = language_model
        self.llm = llm
        self.embedder = embedder
        self.pair_judge = pair_judge

    def relations(
        self, text: str, memories: list[RetrievedMemory], speaker: str | None, ctx: PCMContext
    ) -> dict[str, dict[str, float]]:
        """P(consistent/novel/contradiction) of `text` against each judged memory (`judged_facts`),
        by memory id; {} when no relation model is available (no file, no embedder)."""
        return self.pair_judge(ctx)(text, judged_facts(memories, speaker, ctx.relation_top_k))

    def cheap_signals(self, text: str, memories: list[RetrievedMemory]) -> dict[str, float]:
        """Signals that need no language model (CHEAP_FEATURES).

        Similarities are those of the directly retrieved facts (hypotheses restate their
        observation): the best one, its margin over the others (MiniLM's similarities sit
        higher in Chinese, the margin is comparable across languages) and the share of the
        input's words that the best fact already has. Cues are counted by `pcm.cues`.
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
            "retrieval_entropy": retrieval_entropy([m.score for m in searched]),
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

    def observe(
        self,
        text: str,
        memories: list[RetrievedMemory],
        recent: str,
        ctx: PCMContext,
        speaker: str | None = None,
        level_prior: list[float] | None = None,
        clashing: list[str] | None = None,
        answers_question: bool = False,
        memory_size: int = 0,
    ) -> TurnSignals:
        """What routing reads about `text` given the retrieved `memories`: the cheap signals and the
        relation verdicts now, the LM's signals when asked. `level_prior` is the user's own (see
        `adapted_level_prior`; default the configured one). A memory whose life state `text`
        excludes (`clashing`) is judged contradicted outright (LIFE_STATE_VERDICT). `memory_size`: how many
        memories the user holds."""
        context = _context_text(memories, recent)
        signals = self.cheap_signals(text, memories)
        relations = self.relations(text, memories, speaker, ctx)
        relations.update({memory_id: dict(LIFE_STATE_VERDICT) for memory_id in clashing or []})
        signals.update(relation_signals(relations))
        return TurnSignals(
            text,
            memories,
            signals,
            relations,
            list(level_prior or ctx.level_prior),
            lambda: signals.update(self.language_model_signals(text, context)),
            lambda judged: self.judge(text, judged),
            list(clashing or []),
            answers_question,
            memory_size=memory_size,
        )

    def report(
        self,
        turn: TurnSignals,
        level: str | None,
        source: str,
        probabilities: dict[str, float],
        judgement: RelationJudgement | None,
        posterior: list[float] | None,
        ctx: PCMContext,
    ) -> tuple[SurprisalPacket, RelationJudgement | None]:
        """The packet of a routed turn (`level` None: S_eff against θ_low/θ_high decides), and the
        LLM judgement made for it. S_raw gets what its scorer needs: the LM's signals, and for
        hybrid the LLM's conflict score when the thresholds decide."""
        signals, memories = turn.signals, turn.memories
        if ctx.scorer != "hybrid" and "nll" not in signals:
            turn.add_language_model_signals()
        if level is None and ctx.scorer == "hybrid" and judgement is None:
            judgement = self.judge(turn.text, memories)
        if judgement is not None:
            signals["conflict"] = judgement.conflict_score
        s_raw = raw_surprisal(ctx.scorer, signals, ctx.hybrid_alpha) if memories else 0.0
        entropy = signals["retrieval_entropy"]
        s_eff = effective_surprisal(s_raw, entropy, ctx.surprise_lambda, has_context=bool(memories))
        theta_low, theta_high = ctx.thresholds()
        packet = SurprisalPacket(
            content=turn.text,
            scorer=ctx.scorer,
            s_raw=s_raw,
            retrieval_entropy=entropy,
            s_eff=s_eff,
            theta_low=theta_low,
            theta_high=theta_high,
            level=level or surprise_level(s_eff, theta_low, theta_high),
            level_source=source,
            level_probabilities=probabilities,
            signals=signals,
            retrieved_context=[m.id for m in memories],
            relations=turn.relations,
            level_prior=list(turn.prior) if ctx.router == "calibrated" else None,
            router_posterior=posterior,
        )
        return packet, judgement


def _context_text(memories: list[RetrievedMemory], recent: str) -> str:
    context = "\n".join(m.content for m in memories)
    return f"{context}\n{recent}" if context and recent else (context or recent)
