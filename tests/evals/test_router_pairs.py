"""Router scenarios built from the relation training pairs, and their out-of-fold relation signals."""

from types import SimpleNamespace

import numpy as np
import pytest

from evals.fit.relation_pairs import load_pairs
from evals.fit.router_pairs import out_of_fold_relation_signals, pair_scenarios

AREAS = ("work", "diet", "pets", "city")


def _pairs(groups: int = 12) -> list[dict]:
    pairs = []
    for g in range(groups):
        area, lang = AREAS[g % len(AREAS)], "zh" if g % 3 == 0 else "en"
        memory = f"memory {g} about {area}"
        for k, label in enumerate(("consistent", "novel", "contradiction")):
            pairs.append(
                {
                    "id": f"g{g}-{k}",
                    "group": f"g{g}",
                    "lang": lang,
                    "area": area,
                    "memory": memory,
                    "statement": f"statement {g}-{k} ({label})",
                    "label": label,
                    "kind": "test",
                }
            )
    return pairs


def _encode(texts: list[str]) -> np.ndarray:
    vectors = np.stack([np.random.default_rng(abs(hash(t)) % 2**32).normal(size=8) for t in texts])
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_pair_scenarios_hold_the_memory_among_other_areas_and_take_the_labels_level():
    pairs = _pairs()
    scenarios = pair_scenarios(pairs, per_level=5, seed=1)
    assert [s["expected_level"] for s in scenarios].count("high") == 5 and len(scenarios) == 15
    by_id = {p["id"]: p for p in pairs}
    memories = {p["memory"]: p for p in pairs}
    for scenario in scenarios:
        pair = by_id[scenario["id"]]
        assert scenario["probe"] == pair["statement"] and pair["memory"] in scenario["history"]
        assert (
            scenario["expected_level"]
            == {"consistent": "low", "novel": "medium", "contradiction": "high"}[pair["label"]]
        )
        others = [memories[m] for m in scenario["history"] if m != pair["memory"]]
        assert 1 <= len(others) <= 2
        assert all(o["area"] != pair["area"] and o["lang"] == pair["lang"] for o in others)
    assert pair_scenarios(pairs, per_level=5, seed=1) == scenarios  # seeded


def test_removing_some_groups_leaves_every_other_draw_as_it_was():
    """The draws are ordered by a hash, not a shuffle: removing groups from the pool changes only
    what touched them (a shuffle redrew all 900 router scenarios after a 3% cleanup)."""
    from evals.fit.relation_pairs import split_groups, with_negatives

    pairs = _pairs()
    removed = {p["group"] for p in pairs[:12]}
    fewer = [p for p in pairs if p["group"] not in removed]
    before = {s["id"]: s for s in pair_scenarios(pairs, per_level=6, seed=0)}
    after = pair_scenarios(fewer, per_level=6, seed=0)
    removed_memories = {p["memory"] for p in pairs if p["group"] in removed}
    unchanged = [s for s in after if s["id"] in before and not removed_memories & set(before[s["id"]]["history"])]
    assert unchanged and all(before[s["id"]] == s for s in unchanged)
    assert len([s for s in after if s["id"] in before]) >= len(after) - 6

    kept_all, held_all = split_groups(pairs, 0.3, seed=0)
    kept_fewer, held_fewer = split_groups(fewer, 0.3, seed=0)
    assert len(held_fewer - held_all) <= len(removed)
    assert kept_fewer - kept_all <= held_all and len(kept_fewer - kept_all) <= len(removed)

    negatives_all = {r["id"]: r["memory"] for r in with_negatives(pairs, set(), 0) if r["kind"] == "unrelated"}
    negatives_fewer = {r["id"]: r["memory"] for r in with_negatives(fewer, set(), 0) if r["kind"] == "unrelated"}
    moved = [i for i, memory in negatives_fewer.items() if negatives_all[i] != memory]
    assert all(negatives_all[i] in removed_memories for i in moved)


def _groups_seen_by(monkeypatch, function: str) -> list[set[str]]:
    """Record the groups of the rows each call of `<function>` by `evals.fit.router_pairs` is given."""
    import evals.fit.router_pairs as router_pairs

    seen: list[set[str]] = []
    real = getattr(router_pairs, function)

    def recording(rows, *args):
        seen.append({r["group"] for r in rows})
        return real(rows, *args)

    monkeypatch.setattr(router_pairs, function, recording)
    return seen


def test_relation_signals_come_from_a_head_that_never_saw_the_scenarios_group(monkeypatch):
    pairs = _pairs()
    scenarios = pair_scenarios(pairs, per_level=4, seed=0)
    records = [SimpleNamespace(id=s["id"], signals={"relation_contradiction": 1.0, "nll": 2.0}) for s in scenarios]
    trained_on = _groups_seen_by(monkeypatch, "with_negatives")
    judged = out_of_fold_relation_signals(
        records, scenarios, pairs, _encode, ("product", "difference", "cosine"), c=1.0, folds=3, seed=0
    )
    assert len(trained_on) == 3
    assert all(groups < {p["group"] for p in pairs} for groups in trained_on)
    for record, scenario in zip(judged, scenarios):
        assert set(record.signals) >= {"relation_consistent", "relation_novel", "relation_contradiction", "nll"}
        assert all(0.0 <= record.signals[f"relation_{r}"] < 1.0 for r in ("consistent", "novel", "contradiction"))
        # exactly one fold judged it: the one whose head was fitted without its group
        assert sum(scenario["group"] not in groups for groups in trained_on) == 1
    assert records[0].signals["relation_contradiction"] == 1.0  # the inputs are not changed
    with pytest.raises(ValueError, match="records for"):
        out_of_fold_relation_signals(records[:2], scenarios, pairs, _encode, ("cosine",), c=1.0)


def test_the_bilinear_blocks_subspace_is_fitted_per_fold_without_the_judged_groups(monkeypatch):
    pairs = _pairs()
    scenarios = pair_scenarios(pairs, per_level=4, seed=0)
    records = [SimpleNamespace(id=s["id"], signals={"nll": 2.0}) for s in scenarios]
    fitted_on = _groups_seen_by(monkeypatch, "fit_basis")
    judged = out_of_fold_relation_signals(
        records, scenarios, pairs, _encode, ("cosine", "bilinear"), c=1.0, folds=3, seed=0, rank=3
    )
    assert len(fitted_on) == 3
    for record, scenario in zip(judged, scenarios):
        assert 0.0 < record.signals["relation_contradiction"] < 1.0
        assert sum(scenario["group"] not in groups for groups in fitted_on) == 1
    with pytest.raises(ValueError, match="basis"):
        out_of_fold_relation_signals(records, scenarios, pairs, _encode, ("cosine", "bilinear"), c=1.0)


def test_chat_turns_become_low_examples_with_every_signal_measured_with_routing_off(ctx):
    from evals.fit.router_pairs import chat_turn_records
    from pcm.datasets.locomo import load_locomo
    from pcm.services import Services

    conversation = load_locomo("../shared/datasets/locomo/conv-26.json")[0]
    session = conversation.sessions[0]
    conversation = conversation.model_copy(
        update={"sessions": [session.model_copy(update={"turns": session.turns[:6]})]}
    )
    off = ctx.replace(router="off", scorer="nll")
    records = chat_turn_records([conversation], off, Services(off), progress=False)
    ids = [t.dia_id for t in session.turns[:6]]
    assert 0 < len(records) < 6 and records[0].id != ids[0]  # the first turn retrieves nothing
    assert [r.id for r in records] == [i for i in ids if i in {r.id for r in records}]
    for record in records:
        assert record.expected == "low"
        assert {"nll", "nll_delta", "max_similarity", "relation_contradiction"} <= set(record.signals)
        assert record.signals["max_similarity"] > 0
    with pytest.raises(ValueError):
        chat_turn_records([conversation], ctx.replace(router="calibrated"), Services(off), progress=False)


def test_calibrate_refuses_a_chat_file_that_is_not_there_before_measuring_anything(tmp_path):
    from typer.testing import CliRunner

    from evals.__main__ import app

    out = tmp_path / "calibration.json"
    result = CliRunner().invoke(app, ["calibrate", "--out", str(out), "--chat", str(tmp_path / "missing.json")])
    assert result.exit_code != 0 and "--chat" in result.output and not out.exists()


def test_calibrate_refuses_router_pairs_that_are_not_there_or_not_pairs_before_measuring_anything(tmp_path):
    from typer.testing import CliRunner

    from evals.__main__ import app

    out = tmp_path / "calibration.json"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "lang": "en", "memory": "I live in Oslo."}\n', encoding="utf-8")
    for pairs in (tmp_path / "missing.jsonl", bad):
        result = CliRunner().invoke(app, ["calibrate", "--out", str(out), "--router-pairs", str(pairs)])
        assert result.exit_code != 0 and "--router-pairs" in result.output and not out.exists()
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        load_pairs(bad)
