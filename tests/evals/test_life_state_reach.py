"""`python -m evals life-states`: the life-state table's reach and false clashes on labelled pairs."""

import json
import re

import pytest
from typer.testing import CliRunner

from evals.__main__ import app
from evals.bench.life_state_reach import table_reach
from evals.fit.relation_pairs import load_pairs

PAIRS = [
    # an implicit revision the table reads (meat: abstains → consumes)
    {
        "id": "a",
        "lang": "en",
        "memory": "I've been vegetarian for eleven years.",
        "statement": "Smoked a pork shoulder for nine hours yesterday.",
        "label": "contradiction",
        "kind": "implicit",
    },
    # one it cannot read (world knowledge: Alfama is in Lisbon)
    {
        "id": "b",
        "lang": "en",
        "memory": "Right now I'm stuck in Frankfurt.",
        "statement": "Having breakfast on my balcony in Alfama.",
        "label": "contradiction",
        "kind": "implicit",
    },
    {
        "id": "c",
        "lang": "en",
        "memory": "I'm vegetarian.",
        "statement": "Made a huge lentil curry tonight.",
        "label": "consistent",
    },
    # a false clash the table makes: skipping shrimp is read as eating shellfish
    {
        "id": "d",
        "lang": "en",
        "memory": "I can't eat shellfish, I get hives.",
        "statement": "Skipped the shrimp cocktail at the party and stuck to the cheese board.",
        "label": "consistent",
    },
    {"id": "e", "lang": "zh", "memory": "我吃素好几年了。", "statement": "打算再养一只猫。", "label": "novel"},
]


def test_reach_counts_clashes_per_label_kind_and_language_and_lists_false_clashes(tmp_path, write_jsonl):
    results = table_reach(load_pairs(write_jsonl(tmp_path / "p.jsonl", PAIRS)))
    assert results["pairs"] == 5
    assert results["by_label"]["contradiction"] == {"pairs": 2, "clashes": 1, "share": 0.5}
    assert results["by_label"]["consistent"] == {"pairs": 2, "clashes": 1, "share": 0.5}
    assert results["by_label"]["novel"] == {"pairs": 1, "clashes": 0, "share": 0.0}
    assert results["contradictions_by_kind"]["implicit en"]["clashes"] == 1
    assert results["by_label_and_language"]["novel zh"]["pairs"] == 1
    assert results["false_clashes"] == [{"id": "d", "facets": ["shellfish"]}]


def test_a_malformed_pair_is_an_error_naming_its_line_and_the_command_writes_nothing(tmp_path, write_jsonl):
    bad = write_jsonl(tmp_path / "bad.jsonl", [PAIRS[0], {**PAIRS[2], "label": "maybe"}])
    with pytest.raises(ValueError, match=r"bad.jsonl:2"):
        load_pairs(bad)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["life-states", "--pairs", str(bad), "--out", str(out)])
    # the message sits in a box that wraps a long temporary path: compare without the box and spaces
    assert result.exit_code != 0 and "bad.jsonl:2" in re.sub(r"[\s│╭╮╰╯─]", "", result.output)
    assert not out.exists()


def test_the_command_reports_on_a_folder_of_pair_files(tmp_path, write_jsonl):
    folder = tmp_path / "pairs"
    folder.mkdir()
    write_jsonl(folder / "one.jsonl", PAIRS[:2])
    write_jsonl(folder / "two.jsonl", PAIRS[2:])
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["life-states", "--pairs", str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    saved = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert saved["pairs"] == 5 and saved["by_label"]["contradiction"]["clashes"] == 1
    assert "| contradiction | 2 | 1 | 0.500 |" in (out / "report.md").read_text(encoding="utf-8")


def test_the_table_sends_almost_no_consistent_or_novel_training_pair_to_correction():
    """Precision at scale: on the 2,682 consistent and novel training pairs (traps with shared words,
    near misses, other people's traits) the table found 4 false clashes on 2026-11-29."""
    results = table_reach(load_pairs())
    wrong = results["by_label"]["consistent"]["clashes"] + results["by_label"]["novel"]["clashes"]
    checked = results["by_label"]["consistent"]["pairs"] + results["by_label"]["novel"]["pairs"]
    assert checked > 2500 and wrong <= 0.003 * checked


def test_the_blind_pair_file_keeps_its_written_rules():
    """evals/data/pairs_blind.jsonl, written blind to the code: 150 pairs (70 implicit contradictions,
    40 consistent, 40 novel, a fifth in Chinese), less one consistent Chinese pair that paraphrased a
    training pair (`test_relation_training_data.py`)."""
    from collections import Counter
    from pathlib import Path

    rows = load_pairs(Path(__file__).resolve().parents[2] / "evals" / "data" / "pairs_blind.jsonl")
    assert len(rows) == 149 and len({r["id"] for r in rows}) == 149
    assert Counter(r["label"] for r in rows) == {"contradiction": 70, "consistent": 39, "novel": 40}
    assert Counter(r["lang"] for r in rows)["zh"] == 29


STATEMENTS = [
    {"facet": "meat", "state": "abstains", "lang": "en", "text": "I've been vegetarian since college."},
    {"facet": "meat", "state": "consumes", "lang": "en", "text": "Asked the butler for a cup of tea."},  # missed
    {"facet": "meat", "state": "none_asserted", "lang": "en", "text": "My sister just went vegan."},
    # a false read: a question about renting reads as renting
    {"facet": "housing", "state": "none_asserted", "lang": "zh", "text": "现在买房划算还是租房划算？"},
]


def test_statement_reads_count_right_reads_and_false_reads_per_language(tmp_path, write_jsonl):
    from evals.bench.life_state_reach import load_statements, statement_reads

    results = statement_reads(load_statements(write_jsonl(tmp_path / "s.jsonl", STATEMENTS)))
    assert results["by_language"]["en"] == {"statements": 2, "read_right": 1, "near_misses": 1, "false_reads": 0}
    assert results["by_language"]["zh"] == {"statements": 0, "read_right": 0, "near_misses": 1, "false_reads": 1}
    assert [m["text"] for m in results["missed"]] == [STATEMENTS[1]["text"]]
    assert results["false_reads"][0]["read"] == "rents"


def test_a_statement_without_a_facet_is_an_error_naming_its_line_and_the_command_writes_nothing(tmp_path, write_jsonl):
    bad = write_jsonl(tmp_path / "bad.jsonl", [STATEMENTS[0], {"state": "has", "lang": "en", "text": "hi"}])
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["life-states", "--statements", str(bad), "--out", str(out)])
    assert result.exit_code != 0 and "bad.jsonl:2" in re.sub(r"[\s│╭╮╰╯─]", "", result.output)
    assert "needsfacet" in re.sub(r"[\s│╭╮╰╯─]", "", result.output)
    assert not out.exists()


def test_the_statement_files_were_split_in_two_halves_by_text():
    """evals/data/life_statements_{dev,test}.jsonl: 938 statements written by a helper that saw no code or
    data, split by a hash of the text; the dev half's errors were read, the test half's never.
    life_statements_test2.jsonl: 660 more, by another helper after the table was written, figures only (one
    line that repeated a dev statement left out)."""
    import zlib
    from pathlib import Path

    from evals.bench.life_state_reach import load_statements

    data = Path(__file__).resolve().parents[2] / "evals" / "data"
    dev, test = (load_statements(data / f"life_statements_{half}.jsonl") for half in ("dev", "test"))
    assert len(dev) + len(test) == 938
    second = load_statements(data / "life_statements_test2.jsonl")
    assert len(second) == 660 and not {r["text"] for r in second} & {r["text"] for r in dev}
    assert {zlib.crc32(r["text"].encode()) % 2 for r in dev} == {0} and {
        zlib.crc32(r["text"].encode()) % 2 for r in test
    } == {1}


def test_the_sport_statement_files_are_two_disjoint_halves():
    """evals/data/sport_statements_{dev,test}.jsonl: 300 statements on 16 sports (practised, stopped, or a near
    miss) written by a helper that saw no code or data, shuffled and cut in two; the dev half's errors were
    read while `pcm.life_sports` was written, the test half's never."""
    from pathlib import Path

    from evals.bench.life_state_reach import load_statements

    data = Path(__file__).resolve().parents[2] / "evals" / "data"
    dev, test = (load_statements(data / f"sport_statements_{half}.jsonl") for half in ("dev", "test"))
    assert (len(dev), len(test)) == (150, 150)
    assert not {r["text"] for r in dev} & {r["text"] for r in test}
    assert {r["facet"].split(":")[0] for r in dev + test} == {"sport"}


def test_the_pet_statement_files_are_two_disjoint_halves():
    """evals/data/pet_statements_{dev,test}.jsonl: 200 statements on pets (had, lost, or a near miss) written by a
    helper that saw no code or data, shuffled and cut in two; the dev half's errors were read while the pet's
    "lost" state was written, the test half's never."""
    from pathlib import Path

    from evals.bench.life_state_reach import load_statements

    data = Path(__file__).resolve().parents[2] / "evals" / "data"
    dev, test = (load_statements(data / f"pet_statements_{half}.jsonl") for half in ("dev", "test"))
    assert (len(dev), len(test)) == (100, 100)
    assert not {r["text"] for r in dev} & {r["text"] for r in test}
    assert {r["facet"] for r in dev + test} == {"cats", "dogs", "pets"}


def test_the_medicine_statement_files_are_two_disjoint_halves_labelled_by_generic_name():
    """evals/data/medicine_statements_{dev,test}.jsonl: 240 statements on medicines of six classes (the drug taken
    now, after a switch the new one, or a near miss) written by a helper that saw no code or data, cut in two by a
    hash of the text; the dev half's errors were read while `pcm.life_medicines` was written, the test half's
    never. A statement reads right when the table names its labelled drug."""
    from pathlib import Path

    from evals.bench.life_state_reach import load_statements, statement_reads

    data = Path(__file__).resolve().parents[2] / "evals" / "data"
    dev, test = (load_statements(data / f"medicine_statements_{half}.jsonl") for half in ("dev", "test"))
    assert (len(dev), len(test)) == (119, 121)
    assert not {r["text"] for r in dev} & {r["text"] for r in test}
    assert {r["facet"].split(":")[0] for r in dev + test} == {"medicine"}
    switch = {"facet": "medicine:statin", "state": "rosuvastatin", "lang": "zh", "text": "医生把我的立普妥换成了可定"}
    wrong = {**switch, "state": "atorvastatin"}
    assert statement_reads([switch])["by_language"]["zh"]["read_right"] == 1
    assert statement_reads([wrong])["by_language"]["zh"]["read_right"] == 0
