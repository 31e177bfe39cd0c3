"""The relation model's training pairs (`training/relation_pairs/`) hold what issue 8 asks of them,
`training/` holds only data that trains something, and no evaluation record repeats a training
pair (issue 44).

A leak is a training pair and an evaluation scenario that judge the same memory in the same
situation: the scenario's remembered fact (the history message `revised_index` names in a long
history; otherwise each history message, the one holding `outdated` among them) near-copies the
pair's memory AND its probe near-copies the pair's statement. Every evaluation file is read, each
by its shape: `evals/data/*.jsonl` (level scenarios; follow-ups, whose probe is judged like a
scenario's and whose later messages are compared, unlabelled, with the history and the probe;
entity files, one text each, which judge no memory and meet only the exact-copy rule; labelled
pairs, judged as a training pair is) and the
shared `../shared/datasets/pcm_scenarios/dev.jsonl` (read in place, when present), against every
jsonl under `training/`. A record of another shape fails the test until it is taught to read it.

Similarity of two texts: both normalised (Unicode NFKC, case folded, punctuation and symbols to
spaces, whitespace collapsed, digits kept), it is the larger of the Jaccard overlap of their token
sets (words; CJK character bigrams) and difflib's SequenceMatcher ratio on the characters (spaces
next to CJK dropped: "写 Go" = "写Go").

Thresholds (measured in issue 44, every scenario against the 4,129 pairs). Unrelated English texts
score up to 0.48 (99.9th percentile; median 0.27, from shared letters and "I", "the"), Chinese
ones up to 0.36 (median 0.06), so a scenario whose statement is Chinese gets lower thresholds
(`CHINESE` below, `ENGLISH` before it). A verbatim copy scores 1.0, a light paraphrase (a changed
name or number, a clause added or dropped, words reordered) 0.5-0.9 in English ("We have a golden
retriever named Biscuit, he's 3." / "I have a golden retriever named Biscuit." 0.88), 0.4-0.7 in
Chinese. Memories of one template score high however different the fact ("I live in Seoul and I
love the food scene here." / "I live in Lyon, love the food scene here." 0.87), so one similar
side never makes a leak. "The label agrees": the pair's label is the scenario's level by
`pcm.routing.LEVEL_OF_RELATION`; a follow-up's "revision" is a contradiction, "still_true"
consistent or novel; a follow-up's later message has no label. The rules, English / Chinese:
- COPY: memory and statement both >= 0.7 / 0.6, whatever the labels;
- PARAPHRASE: the label agrees, memory and statement each >= 0.5 / 0.4 and together >= 1.25 /
  1.0 (dev3 line 10: 0.88 + 0.89). Under it: pairs with one memory and topic but not one event
  ("Biscuit rolled in mud at the park again" / "Biscuit shed so much this week I could knit a
  second dog" 1.0 + 0.41; one Japan trip cancelled / flights moved to Osaka 0.94 + 0.44);
- STATEMENT COPIED: the label agrees, statement >= 0.8 / 0.6 and memory >= 0.2: the probe is the
  statement near-verbatim and the memory the same fact in other words (dev3 line 30:
  "我是素食者，不吃肉也不吃海鲜。" / "我吃纯素三年了，肉蛋奶都不碰。" 0.23; statements 0.84);
  with a memory under 0.2 (nothing in common) the same sentence is another situation;
- SAME REVISION: the label agrees, the pair's statement names the scenario's new fact (`current`,
  which neither memory names), and the memories are near copies (>= 0.8 / 0.6) or alike (>= 0.5 /
  0.4) and both name the scenario's `outdated`: the same change told in other words (dev3 line
  27: the memory verbatim, both statements about starting at 阿里; they share only 阿里 and 园区,
  0.05). The same memory with another new fact is another situation ("I'm a high school math
  teacher." → financial analyst in the shared dev file, → software tester in the pairs);
- TEXT COPIED (the old exact-copy guard): a training memory or statement is, once normalised, a
  message of over 12 characters of an independent file (one whose name does not say "dev").

Speed (< 30 s asked; about 3 s, 2.5 s of CPU): a memory or statement is compared only with
training texts that share one of its rare tokens (in at most `RARE` training texts) and whose
token sets overlap it by `memory_gate` (English 0.2, Chinese 0.05) / `STATEMENT_GATE` (0.15):
every leak found without these filters (about 4 minutes) overlaps by at least 0.28 / 0.12 on
the memory side and 0.23 on the statement side. SequenceMatcher's cheap upper bounds skip the
full ratio where it cannot reach the threshold.
"""

import difflib
import json
import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from evals.fit.relation_pairs import TRAINING_DIR, load_pairs
from pcm.routing import LEVEL_OF_RELATION

ROOT = Path(__file__).resolve().parents[2]
TRAINING = ROOT / "training"
EVALUATION_DIR = ROOT / "evals" / "data"
SHARED_DEV = ROOT.parent / "shared" / "datasets" / "pcm_scenarios" / "dev.jsonl"
AREAS = {
    "work",
    "city",
    "diet",
    "health",
    "family",
    "pets",
    "hobbies",
    "tools",
    "study",
    "money",
    "travel",
    "assistant",
}


@dataclass(frozen=True)
class Thresholds:
    copy: float  # COPY: memory and statement both
    side: float  # PARAPHRASE: memory and statement each, SAME REVISION: memories naming `outdated`
    total: float  # PARAPHRASE: memory + statement
    near: float  # STATEMENT COPIED: statement; SAME REVISION: memory
    related: float  # STATEMENT COPIED: memory
    memory_gate: float  # the least token overlap (Jaccard) of two memories compared further


ENGLISH = Thresholds(copy=0.7, side=0.5, total=1.25, near=0.8, related=0.2, memory_gate=0.2)
CHINESE = Thresholds(copy=0.6, side=0.4, total=1.0, near=0.6, related=0.2, memory_gate=0.05)
STATEMENT_GATE = 0.15  # the least token overlap of two statements compared further (STATEMENT COPIED)
RARE = 200

RELATION_OF_LEVEL = {level: relation for relation, level in LEVEL_OF_RELATION.items()}
RELATIONS_OF_FOLLOWUP = {"revision": {"contradiction"}, "still_true": {"consistent", "novel"}}
CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_RUN = re.compile(f"[{CJK}]+")
SPACE_BY_CJK = re.compile(f"(?<=[{CJK}]) | (?=[{CJK}])")


# -- the training pairs cover what issue 8 asks ------------------------------------------------


def test_training_pairs_cover_the_areas_languages_and_kinds_asked_for():
    pairs = load_pairs()
    assert len(pairs) >= 3000
    assert len({p["id"] for p in pairs}) == len(pairs)
    languages = Counter(p["lang"] for p in pairs)
    assert languages["zh"] / len(pairs) >= 0.2
    assert AREAS <= {p["area"] for p in pairs}
    contradictions = [p for p in pairs if p["label"] == "contradiction"]
    assert sum(p["kind"] == "implicit" for p in contradictions) / len(contradictions) >= 0.45
    kinds = Counter(p["kind"] for p in pairs)
    assert kinds["trap"] >= 300 and kinds["near_miss"] >= 300
    # a trap is a change word that revises nothing: never labelled a contradiction
    assert not [p["id"] for p in pairs if p["kind"] == "trap" and p["label"] == "contradiction"]
    # every group judges one memory
    memories: dict[str, set[str]] = {}
    for p in pairs:
        memories.setdefault(p["group"], set()).add(p["memory"])
    assert all(len(m) == 1 for m in memories.values())


def test_training_holds_only_data_that_trains_something():
    """Every jsonl under `training/` is one `make fit-relation` reads (`load_pairs`'s folder);
    pairs measured and not used stay in the git history, not here."""
    assert {f.parent for f in TRAINING.rglob("*.jsonl")} == {TRAINING_DIR}


# -- no evaluation scenario repeats a training pair ---------------------------------------------


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join("".join(" " if unicodedata.category(c)[0] in "PSZC" else c for c in text).split())


@lru_cache(maxsize=None)
def prepared(text: str) -> tuple[str, frozenset]:
    """(the characters SequenceMatcher compares, the token set Jaccard compares)."""
    norm = normalise(text)
    tokens = {run[i : i + 2] for run in CJK_RUN.findall(norm) for i in range(max(1, len(run) - 1))}
    tokens.update(CJK_RUN.sub(" ", norm).split())
    return SPACE_BY_CJK.sub("", norm), frozenset(tokens)


@lru_cache(maxsize=None)
def similarity(a: str, b: str, floor: float = 0.0) -> float:
    """max(token Jaccard, character ratio); a ratio that cannot reach `floor` is not computed."""
    (chars_a, tokens_a), (chars_b, tokens_b) = prepared(a), prepared(b)
    union = tokens_a | tokens_b
    jaccard = len(tokens_a & tokens_b) / len(union) if union else 0.0
    matcher = difflib.SequenceMatcher(None, chars_a, chars_b, autojunk=False)
    if max(jaccard, matcher.real_quick_ratio()) < floor or max(jaccard, matcher.quick_ratio()) < floor:
        return jaccard
    return max(jaccard, matcher.ratio())


def mentions(text: str, fact: str) -> bool:
    chars, _ = prepared(text)
    fact_chars, _ = prepared(fact)
    if not fact_chars:
        return False
    if CJK_RUN.search(fact_chars):
        return fact_chars in chars
    return re.search(rf"(?<!\w){re.escape(fact_chars)}(?!\w)", chars) is not None


def training_pairs() -> list[tuple[str, dict]]:
    """(file:line, pair) for every pair of every jsonl under `training/`."""
    return [
        (f"training/{file.relative_to(TRAINING)}:{number}", json.loads(line))
        for file in sorted(TRAINING.rglob("*.jsonl"))
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1)
        if line.strip()
    ]


def evaluation_records() -> list[tuple[str, dict, bool]]:
    """(file:line, record, whether the file is independent) for every evaluation file."""
    files = sorted(EVALUATION_DIR.glob("*.jsonl")) + ([SHARED_DEV] if SHARED_DEV.exists() else [])
    return [
        (f"{file.name}:{number}", json.loads(line), "dev" not in file.stem)
        for file in files
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1)
        if line.strip()
    ]


def messages(record: dict) -> list[str]:
    """What a record says: a scenario's history, probe and follow-ups; an entity file's text; a
    translated question (queries_zh.jsonl)."""
    if "probe" in record:
        return [*record["history"], record["probe"], *record.get("followups", [])]
    if "text" in record:
        return [record["text"]]
    if set(record) == {"file", "id", "query"}:
        return [record["query"]]
    if {"memory", "statement", "label"} <= set(record):  # a labelled pair (pairs_blind.jsonl)
        return [record["memory"], record["statement"]]
    raise ValueError(f"an evaluation record of unknown shape ({sorted(record)}): teach this test to read it")


class Case(NamedTuple):
    """One judgement of a record to compare with the pairs."""

    memories: list[str]
    statement: str
    relations: set[str] | None  # the pair labels that agree with the record's; None: unlabelled
    current: str | None = None
    outdated: str | None = None


def judgements(record: dict) -> list[Case]:
    """A scenario's history (or the message `revised_index` names) and probe; a follow-up message
    against the history and the probe, unlabelled; none for a record that judges no memory (an
    entity file's text)."""
    if "statement" in record:  # a labelled pair judges its memory as a training pair does
        return [Case([record["memory"]], record["statement"], {record["label"]})]
    if "probe" not in record:
        return []
    if "expected_level" in record:
        relations = {RELATION_OF_LEVEL[record["expected_level"]]}
    else:
        relations = RELATIONS_OF_FOLLOWUP[record["kind"]]
    index = record.get("revised_index")  # a long history names the message the probe bears on
    memories = [record["history"][index]] if isinstance(index, int) else record["history"]
    return [
        Case(memories, record["probe"], relations, record.get("current"), record.get("outdated")),
        *(Case([*record["history"], record["probe"]], followup, None) for followup in record.get("followups", [])),
    ]


def find_leaks(pairs: list[tuple[str, dict]], records: list[tuple[str, dict, bool]]) -> list[str]:
    """'record place <-> pair place (rule: similarities)' for every leak (the module's rules)."""
    frequency = Counter(
        token for text in {t for _, p in pairs for t in (p["memory"], p["statement"])} for token in prepared(text)[1]
    )
    pairs_of_memory, pairs_of_text = defaultdict(list), defaultdict(list)
    by_memory_token, by_statement_token = defaultdict(set), defaultdict(set)
    for index, (_, pair) in enumerate(pairs):
        pairs_of_memory[pair["memory"]].append(index)
        for text in {pair["memory"], pair["statement"]}:
            pairs_of_text[prepared(text)[0]].append(index)
        for token in prepared(pair["memory"])[1]:
            if frequency[token] <= RARE:
                by_memory_token[token].add(pair["memory"])
        for token in prepared(pair["statement"])[1]:
            if frequency[token] <= RARE:
                by_statement_token[token].add(index)

    def sharing(text, index):
        return set().union(*(index[token] for token in prepared(text)[1]))

    def overlapping(text, other, gate):
        """Token sets that share at least `gate` of their union: the others are not compared further."""
        tokens, others = prepared(text)[1], prepared(other)[1]
        return len(tokens & others) >= gate * len(tokens | others)

    leaks = []
    for place, record, independent in records:
        found = {}
        for case in judgements(record):
            limit = CHINESE if CJK_RUN.search(case.statement) else ENGLISH

            def agrees(pair):
                return case.relations is not None and pair["label"] in case.relations

            def same_revision(memory, m, pair):
                """The pair's statement names the scenario's new fact, which neither memory names,
                and the memories are near copies or both name the fact it replaces."""
                new = case.current
                return (
                    bool(new)
                    and agrees(pair)
                    and mentions(pair["statement"], new)
                    and not (mentions(memory, new) or mentions(pair["memory"], new))
                    and (
                        m >= limit.near
                        or bool(case.outdated)
                        and m >= limit.side
                        and mentions(memory, case.outdated)
                        and mentions(pair["memory"], case.outdated)
                    )
                )

            # the same memory, reworded or not: COPY, PARAPHRASE, SAME REVISION
            least = limit.side if case.relations is not None else limit.copy
            for memory in case.memories:
                for text in sharing(memory, by_memory_token):
                    m = similarity(memory, text, least) if overlapping(memory, text, limit.memory_gate) else 0
                    if m < least:
                        continue
                    for index in pairs_of_memory[text]:
                        where, pair = pairs[index]
                        if not agrees(pair) and m < limit.copy:
                            continue
                        if same_revision(memory, m, pair):
                            found.setdefault(
                                where, f"same revision: memory {m:.2f}, both statements name {case.current!r}"
                            )
                            continue
                        floor = max(limit.side, limit.total - m) if agrees(pair) else limit.copy
                        s = similarity(case.statement, pair["statement"], floor)
                        if m >= limit.copy and s >= limit.copy:
                            found.setdefault(where, f"copy: memory {m:.2f}, statement {s:.2f}")
                        elif agrees(pair) and s >= limit.side and m + s >= limit.total:
                            found.setdefault(where, f"paraphrase: memory {m:.2f}, statement {s:.2f}")
            # the same statement near-verbatim: STATEMENT COPIED
            for index in sharing(case.statement, by_statement_token):
                where, pair = pairs[index]
                if not agrees(pair) or not overlapping(case.statement, pair["statement"], STATEMENT_GATE):
                    continue
                s = similarity(case.statement, pair["statement"], limit.near)
                if s >= limit.near:
                    m = max(similarity(memory, pair["memory"]) for memory in case.memories)
                    if m >= limit.related:
                        found.setdefault(where, f"statement copied: memory {m:.2f}, statement {s:.2f}")
        # TEXT COPIED: no training text is a message of an independent file (the old guard)
        if independent:
            for message in messages(record):
                if len(message) > 12:
                    for index in pairs_of_text.get(prepared(message)[0], []):
                        found.setdefault(pairs[index][0], f"text copied: {message!r}")
        leaks += [f"{place} <-> {where} ({why})" for where, why in sorted(found.items())]
    return leaks


def test_no_evaluation_record_repeats_a_training_pair():
    leaks = find_leaks(training_pairs(), evaluation_records())
    assert not leaks, f"{len(leaks)} evaluation records repeat training pairs:\n" + "\n".join(leaks)


def test_the_leak_rules_catch_reworded_pairs_and_pass_pairs_that_only_share_a_topic():
    """Made-up pairs and scenarios (no evaluation text): what each rule catches and lets pass."""
    pair = dict
    pairs = [
        (
            "cat:1",
            pair(
                memory="I keep a tabby cat called Miso.",
                label="consistent",
                statement="Miso knocked my coffee mug off the desk again this morning.",
            ),
        ),
        (
            "cat:2",
            pair(
                memory="I keep a tabby cat called Miso.",
                label="novel",
                statement="Miso has a vet appointment for her vaccines on Friday.",
            ),
        ),
        (
            "job:1",
            pair(
                memory="I teach chemistry at a secondary school in Leeds.",
                label="contradiction",
                statement="I left teaching and now work as a lab technician at a brewery.",
            ),
        ),
        (
            "bank:1",
            pair(
                memory="我在南京一家银行做柜员。",
                label="contradiction",
                statement="上周从银行辞职了，现在在苏州开了家花店",
            ),
        ),
        ("nurse:1", pair(memory="I'm a nurse.", label="consistent", statement="Long shift today.")),
    ]

    def scenario(history, probe, level, current=None, outdated=None):
        return dict(history=history, probe=probe, expected_level=level, current=current, outdated=outdated)

    records = [
        # a changed name, words reordered (not cat:2: the same memory in another situation)
        (
            "reworded",
            scenario(
                ["I have a tabby cat named Mochi.", "Any podcast tips?"],
                "This morning Mochi knocked my coffee mug off the desk again.",
                "low",
            ),
            False,
        ),
        # the same change told otherwise; another new fact is another situation
        (
            "revised",
            scenario(
                ["I teach chemistry at a secondary school in Leeds."],
                "First week as a lab technician at a brewery done, so much to learn.",
                "high",
                "lab technician",
                "teach chemistry",
            ),
            False,
        ),
        (
            "otherwise",
            scenario(
                ["I teach chemistry at a secondary school in Leeds."],
                "These days I'm a full-time baker, up at four every morning.",
                "high",
                "baker",
                "teach chemistry",
            ),
            False,
        ),
        # in Chinese, a changed number and particles
        (
            "zh",
            scenario(["我在南京的银行当柜员，干了五年。"], "上个月从银行辞职了，现在在苏州开了一家花店。", "high"),
            False,
        ),
        # short sentences on one topic
        ("topic", scenario(["I'm a teacher."], "Long day at school today.", "low"), False),
        # a training statement verbatim with another label: only the exact-copy guard of an independent file
        (
            "copied",
            scenario(
                ["Any podcast tips for a long drive?"], "Miso has a vet appointment for her vaccines on Friday!", "low"
            ),
            True,
        ),
        (
            "copied-dev",
            scenario(
                ["Any podcast tips for a long drive?"], "Miso has a vet appointment for her vaccines on Friday!", "low"
            ),
            False,
        ),
    ]
    leaks = find_leaks(pairs, records)
    assert [leak.split(" (")[0] for leak in leaks] == [
        "reworded <-> cat:1",
        "revised <-> job:1",
        "zh <-> bank:1",
        "copied <-> cat:2",
    ], leaks
