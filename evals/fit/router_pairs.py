"""Router training data beside the scenario file: scenarios built from the relation training pairs
(`training/relation_pairs/`), and turns of a chat between friends (`chat_turn_records`).

The calibrated router was fitted on the 60 probes of one dev file, and its routing accuracy fell
from about 0.9 on the dev files to 0.65–0.72 on files written independently. The relation pairs are
thousands of labelled (memory, statement) examples written for the project (implicit contradictions,
traps with change words, near-miss novelties, a fifth in Chinese), so they are turned into
scenarios: the history is the pair's memory among one or two memories of other life areas in the
same language (as a scenario file mixes a fact with unrelated turns), the probe is the statement,
and the level is the label's (consistent → low, novel → medium, contradiction → high).

The router also reads the relation model's verdicts (`relation_*` signals). On these scenarios the
shipped relation model has seen the very pairs, so its verdicts there would be overconfident: each
scenario's relation signals are replaced by those of a relation head fitted without that
scenario's group (k folds of groups, the shipped model's inputs and C), as the model would judge
an unseen pair at run time.
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from langgraph.checkpoint.memory import InMemorySaver

from evals.bench.locomo import ingest
from evals.fit.relation_fit import encoder_features, fit_basis, fit_head
from evals.fit.relation_pairs import stable_key, stable_number, with_negatives
from pcm.api import PCM
from pcm.perception.relation import RELATIONS, pair_features
from pcm.routing import LEVEL_OF_RELATION
from pcm.speech_acts import is_request


def pair_scenarios(pairs: Sequence[dict], per_level: int, seed: int = 0) -> list[dict]:
    """Up to `per_level` scenarios per level: the pairs first by `stable_key`, each with one other
    memory (three times in four) or two, also chosen by `stable_key`. An edit to the pairs changes
    only the scenarios it touches (a seeded shuffle redrew all 900 when 3% of the pairs were
    removed, which mixed the draw's effect with the edit's)."""

    def fraction(*parts: str) -> float:
        return stable_number(seed, *parts) / 2**64

    memories: dict[str, tuple[str, str, str]] = {}
    for pair in pairs:
        memories.setdefault(pair["group"], (pair["memory"], pair["lang"], pair["area"]))
    scenarios = []
    for label, level in LEVEL_OF_RELATION.items():
        drawn = sorted((p for p in pairs if p["label"] == label), key=lambda p: stable_key(seed, p["id"]))
        for pair in drawn[:per_level]:
            others = sorted(
                (m for m, lang, area in memories.values() if lang == pair["lang"] and area != pair["area"]),
                key=lambda memory: stable_key(seed, pair["id"], memory),
            )
            history = others[: 1 if fraction(pair["id"], "size") < 0.75 else 2]
            history.insert(int(fraction(pair["id"], "position") * (len(history) + 1)), pair["memory"])
            scenarios.append(
                {
                    "id": pair["id"],
                    "group": pair["group"],
                    "lang": pair["lang"],
                    "history": history,
                    "probe": pair["statement"],
                    "expected_level": level,
                    "domain": None,
                    "query": pair["memory"],
                    "current": None,
                    "outdated": None,
                }
            )
    return scenarios


def out_of_fold_relation_signals(
    records: Sequence,
    scenarios: Sequence[dict],
    pairs: Sequence[dict],
    encode: Callable[[list[str]], np.ndarray],
    blocks: Sequence[str],
    c: float,
    folds: int = 3,
    seed: int = 0,
    rank: int = 0,
) -> list:
    """Copies of `records` (one per scenario, same order) whose `relation_*` signals are the maxima,
    over the scenario's history, of P(relation) from a head fitted on the other folds' groups
    (`rank`: the `bilinear` block's subspace, fitted on those groups too)."""
    if len(records) != len(scenarios):
        raise ValueError(f"{len(records)} records for {len(scenarios)} scenarios")
    fold_of = {group: stable_number(seed, group) % folds for group in {p["group"] for p in pairs}}
    texts = list(
        dict.fromkeys(
            [t for p in pairs for t in (p["memory"], p["statement"])]
            + [t for s in scenarios for t in (*s["history"], s["probe"])]
        )
    )
    vectors = dict(zip(texts, encode(texts)))
    judged: list = list(records)
    for fold in range(folds):
        kept = [p for p in pairs if fold_of[p["group"]] != fold]
        rows = with_negatives(kept, set(), seed)
        basis = fit_basis(rows, rank, vectors)
        scaler, model = fit_head(encoder_features(rows, tuple(blocks), vectors, basis), [r["label"] for r in rows], c)
        labels = list(model.classes_)
        for i, (record, scenario) in enumerate(zip(records, scenarios)):
            if fold_of[scenario["group"]] != fold:
                continue
            probe = scenario["probe"]
            x = np.stack(
                [pair_features(tuple(blocks), vectors[m], vectors[probe], m, probe, basis) for m in scenario["history"]]
            )
            probabilities = model.predict_proba(scaler.transform(x))
            out = copy.copy(record)
            out.signals = {
                **record.signals,
                **{f"relation_{r}": float(probabilities[:, labels.index(r)].max()) for r in RELATIONS},
            }
            judged[i] = out
    return judged


@dataclass
class ChatTurnRecord:
    """One turn of a chat between friends, as the router saw it with routing off: a "low" example."""

    id: str
    signals: dict
    expected: str = "low"


def chat_turn_records(conversations: Sequence, ctx, services, progress: bool = True) -> list[ChatTurnRecord]:
    """Each conversation replayed with routing off (every signal measured, `ctx` with router "off"),
    its turns kept as "low" examples: a chat between friends holds next to no revisions, and the
    router fitted without any misread it (about 12% of LoCoMo turns sent to correction). Turns the
    cascade never routes (nothing retrieved, a request to the assistant) are left out."""
    if ctx.router != "off" or ctx.scorer == "hybrid":
        raise ValueError(
            "chat turns are measured with routing off and an LM scorer (every signal, no earlier "
            f"router's decisions); got router {ctx.router!r}, scorer {ctx.scorer!r}"
        )
    records: list[ChatTurnRecord] = []

    def keep(turn, state: dict) -> None:
        packet = state["surprisal"]
        if packet["retrieved_context"] and not is_request(turn.full_text):
            records.append(ChatTurnRecord(id=turn.dia_id, signals=packet["signals"]))

    with tempfile.TemporaryDirectory(prefix="pcm-chat-") as folder:
        ctx = ctx.replace(data_dir=folder)
        pcm = PCM(ctx, services.with_context(ctx), checkpointer=InMemorySaver())
        for conversation in conversations:
            ingest(pcm, conversation, progress=progress, on_turn=keep)
    return records
