"""Reading the evaluation files: JSON Lines, one record per non-blank line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path


def numbered_records(path: str | Path) -> Iterator[tuple[int, dict]]:
    """(line number, record) of each non-blank line; a line that is not JSON is an error naming it."""
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: not JSON ({error})") from error
