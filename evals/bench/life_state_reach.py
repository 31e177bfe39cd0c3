"""How far the life-state table (`pcm.life_states`) reaches, on labelled (memory, statement) pairs:
the share of contradictions on which it finds a clash (its recall, by kind and language) and the
share of consistent and novel pairs on which it wrongly does (false clashes).

The table routes a turn to correction outright, so a false clash costs a true memory; the scenario
files hold few revisions each, so this is where its precision and its reach are measured at scale.
By default the pairs are the relation model's training pairs (`training/relation_pairs/`, written
for the project: implicit and explicit contradictions, traps, near misses, a fifth in Chinese). Any
file of the same shape works, one {"id", "lang", "memory", "statement", "label"} per line with an
optional "kind" or "category" to break contradictions down by (`evals.fit.relation_pairs.load_pairs`
reads both).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from evals.jsonl import numbered_records
from pcm.life_states import clashes

SECTIONS = ("by_label", "by_label_and_language", "contradictions_by_kind")


def table_reach(pairs: list[dict]) -> dict:
    """Clashes found per label, per (label, language) and per kind of contradiction; the false
    clashes listed (consistent and novel pairs the table would send to correction)."""
    totals = {section: Counter() for section in SECTIONS}
    hits = {section: Counter() for section in SECTIONS}
    false_clashes = []
    for pair in pairs:
        found = clashes(pair["statement"], pair["memory"])
        label, language = pair["label"], pair["lang"]
        keys = {"by_label": label, "by_label_and_language": f"{label} {language}"}
        if label == "contradiction":
            kind = pair.get("kind") or pair.get("category") or "unlabelled"
            keys["contradictions_by_kind"] = f"{kind} {language}"
        elif found:
            false_clashes.append({"id": pair["id"], "facets": found})
        for section, key in keys.items():
            totals[section][key] += 1
            hits[section][key] += bool(found)
    shares = {
        section: {
            key: {"pairs": n, "clashes": hits[section][key], "share": round(hits[section][key] / n, 4)}
            for key, n in sorted(totals[section].items())
        }
        for section in SECTIONS
    }
    return {"pairs": len(pairs), **shares, "false_clashes": false_clashes}


def report(results: dict, source: str) -> str:
    """A Markdown report of `table_reach`'s results on the pairs of `source`."""
    lines = [
        f"# Life-state table reach on {source} ({results['pairs']} pairs)",
        "",
        "| pairs | count | clashes found | share |",
        "|---|---|---|---|",
    ]
    for section in SECTIONS:
        for key, row in results[section].items():
            name = key if section != "contradictions_by_kind" else f"contradiction: {key}"
            lines.append(f"| {name} | {row['pairs']} | {row['clashes']} | {row['share']:.3f} |")
    wrong = results["false_clashes"]
    lines += ["", f"False clashes (consistent or novel pairs sent to correction): {len(wrong)}"]
    lines += [f"- {w['id']}: {', '.join(w['facets'])}" for w in wrong]
    return "\n".join(lines)


def load_statements(path: Path) -> list[dict]:
    """The labelled statements of `path`; a line without a text, facet, state or language is an error naming it."""
    rows = []
    for number, row in numbered_records(path):
        missing = [key for key in ("text", "facet", "state", "lang") if not isinstance(row.get(key), str)]
        if missing:
            raise ValueError(f"{path}:{number}: needs {', '.join(missing)}")
        rows.append(row)
    return rows


def statement_reads(statements: list[dict]) -> dict:
    """How the table reads single statements labelled with the state they assert about their speaker,
    one {"facet", "state", "lang", "text"} per line, state "none_asserted" for a near miss (someone
    else's state, the past, a wish, a question): per language, the statements read as their state
    (recall) and the near misses read as any state (false reads), both listed."""
    from pcm.life_states import life_states

    counts = {name: Counter() for name in ("statements", "read_right", "near_misses", "false_reads")}
    false_reads, missed = [], []
    for row in statements:
        read = life_states(row["text"]).get(row["facet"])
        if isinstance(read, frozenset):  # an open value: right when it names the labelled value
            read = row["state"] if row["state"] in read else "values"
        entry = {"text": row["text"], "lang": row["lang"], "facet": row["facet"], "state": row["state"], "read": read}
        if row["state"] == "none_asserted":
            counts["near_misses"][row["lang"]] += 1
            if read is not None:
                counts["false_reads"][row["lang"]] += 1
                false_reads.append(entry)
        else:
            counts["statements"][row["lang"]] += 1
            if read == row["state"]:
                counts["read_right"][row["lang"]] += 1
            else:
                missed.append(entry)
    languages = sorted(counts["statements"] | counts["near_misses"])
    by_language = {lang: {name: counts[name][lang] for name in counts} for lang in languages}
    return {"statements": len(statements), "by_language": by_language, "false_reads": false_reads, "missed": missed}


def statements_report(results: dict, source: str) -> str:
    """A Markdown report of `statement_reads`' results on the statements of `source`."""
    lines = [
        f"# Life-state table on single statements: {source} ({results['statements']} statements)",
        "",
        "| language | statements | read as their state | near misses | read as a state (false) |",
        "|---|---|---|---|---|",
    ]
    for lang, row in results["by_language"].items():
        recall = row["read_right"] / max(row["statements"], 1)
        lines.append(
            f"| {lang} | {row['statements']} | {row['read_right']} ({recall:.3f}) | {row['near_misses']} | "
            f"{row['false_reads']} |"
        )
    return "\n".join(lines)
