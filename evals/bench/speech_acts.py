"""How `pcm.speech_acts.is_request` reads turns that ask something, on labelled turns.

A turn read as a request routes "low" whatever it tells, and is never a conflict, so a turn that tells a fact
("Moved to Leeds last month, where's good for brunch?") read as a request loses that fact; a turn that tells
nothing read as a statement is routed by the usual signals instead. One {"id", "lang", "text", "tells", "kind"}
per line, "tells" one of "yes", "no" or "borderline" (left out of the counts), "kind" the form of the turn
(tell_then_ask, hypothetical, framing, ...).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from evals.jsonl import numbered_records
from pcm.speech_acts import is_request

_TELLS = ("yes", "no", "borderline")


def load_speech_acts(path: Path) -> list[dict]:
    """The labelled turns of `path`; a line without a text, language, kind or a "tells" of yes, no or
    borderline is an error naming it."""
    rows = []
    for number, row in numbered_records(path):
        missing = [key for key in ("text", "lang", "kind") if not isinstance(row.get(key), str)]
        if row.get("tells") not in _TELLS:
            missing.append("tells (yes, no or borderline)")
        if missing:
            raise ValueError(f"{path}:{number}: needs {', '.join(missing)}")
        rows.append(row)
    return rows


def request_reads(rows: list[dict]) -> dict:
    """Per language and per kind: the turns that tell something read as requests (facts lost), and the
    turns that tell nothing read as statements; both listed by id."""
    counts = {name: Counter() for name in ("tells", "tells_read_as_request", "tells_nothing", "read_as_statement")}
    lost, kept_as_statements = [], []
    for row in rows:
        if row["tells"] == "borderline":
            continue
        request = is_request(row["text"])
        keys = (row["lang"], f"kind {row['kind']}", "all")
        if row["tells"] == "yes":
            counts["tells"].update(keys)
            if request:
                counts["tells_read_as_request"].update(keys)
                lost.append(row["id"])
        else:
            counts["tells_nothing"].update(keys)
            if not request:
                counts["read_as_statement"].update(keys)
                kept_as_statements.append(row["id"])
    groups = sorted(counts["tells"] | counts["tells_nothing"])
    return {
        "turns": len(rows),
        "by_group": {group: {name: counts[name][group] for name in counts} for group in groups},
        "tells_read_as_request": lost,
        "tells_nothing_read_as_statement": kept_as_statements,
    }


def report(results: dict, source: str) -> str:
    """A Markdown table of `request_reads`' results on the turns of `source`."""
    lines = [
        f"# Requests read by `is_request`: {source} ({results['turns']} turns, borderline ones left out)",
        "",
        "| group | turns that tell | read as requests (fact lost) | turns that tell nothing | read as statements |",
        "|---|---|---|---|---|",
    ]
    for group, row in results["by_group"].items():
        lines.append(
            f"| {group} | {row['tells']} | {row['tells_read_as_request']} | {row['tells_nothing']} | "
            f"{row['read_as_statement']} |"
        )
    return "\n".join(lines)
