"""The word lists behind entity names (`pcm/world/data/`) and the scripts that build them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.fit.en_places import ORDINARY_WORDS, place_names
from evals.fit.zh_places import _county_name, short_name
from pcm.world.names_zh_words import KINDS

DATA = Path(__file__).resolve().parents[2] / "pcm" / "world" / "data"


@pytest.mark.parametrize(
    ("full", "short"),
    [
        ("大理白族自治州", "大理"),
        ("湘西土家族苗族自治州", "湘西"),
        ("新疆维吾尔自治区", "新疆"),
        ("香港特别行政区", "香港"),
        ("南山区", "南山"),
        ("北京市", "北京"),
    ],
)
def test_a_division_is_also_known_by_its_name_without_its_level(full, short):
    assert short_name(full) == short


def test_a_county_is_listed_by_a_name_that_reads_as_a_place_not_by_a_common_word():
    assert _county_name("义乌") and _county_name("浦东") and _county_name("南山区")
    assert not _county_name("和平") and not _county_name("公安") and not _county_name("三台")


@pytest.mark.parametrize(
    "name",
    [
        "zh_places.txt",
        "zh_names.txt",
        "en_first_names.txt",
        "en_last_names.txt",
        "en_places.txt",
        "en_organisations.txt",
    ],
)
def test_the_shipped_lists_hold_names_only(name):
    entries = [line for line in (DATA / name).read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    assert len(entries) > 400 and len(entries) == len(set(entries))
    assert all(len(entry) > 1 and entry == entry.strip() for entry in entries)
    assert not KINDS & set(entries)  # 古城 alone is no place


def test_english_places_are_built_from_the_geonames_tables_without_places_spelt_as_everyday_words(tmp_path):
    tables = {
        "continents.json": {"EU": {"name": "Europe"}},
        "countries.json": {"FR": {"name": "France"}},
        "us_states.json": {"WA": {"name": "Washington"}},
        "cities15000.json": {
            "1": {"name": "São Paulo", "population": 12_000_000},
            "2": {"name": "Mobile", "population": 190_000},
            "3": {"name": "Smallville", "population": 20_000},
        },
    }
    for name, table in tables.items():
        (tmp_path / name).write_text(json.dumps(table), encoding="utf-8")
    names = place_names(tmp_path)
    assert {"europe", "france", "washington", "são paulo", "sao paulo", "england"} <= names
    assert "mobile" in ORDINARY_WORDS and "mobile" not in names and "smallville" not in names
