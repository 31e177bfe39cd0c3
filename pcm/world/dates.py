"""Time as a key: the time a query asks about, and the times a memory is about.

A query names a time as a day ("on October 13, 2023", "13 October, 2023", "2023-10-13",
"2023年10月13日"), a month ("in July 2023", "2023年7月") or a month of any year ("in June", "6月");
"before <day>" widens a day to the `BEFORE_DAYS` days up to it ("last weekend before April 10,
2023"); with none of these, a year after "in", "during", "since", "of" or "from" ("in 2021",
"2021年") asks about that year. A memory is about the time it was said (its session time, else when
it was written), the days its text names, and the past days it names relative to when it was said
("yesterday", "last week", "two months ago", "last year", 昨天, 上个月, 三年前): "I visited Italy last
year", said in 2022, is about 2021. Future plans ("next week") are left out: a plan says when it was
meant to happen, not when it did.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from pcm.formulas import time_match

_MONTHS = "january february march april may june july august september october november december".split()
MONTH_NUMBERS = {name: number for number, name in enumerate(_MONTHS, 1)} | {
    name[:3]: number for number, name in enumerate(_MONTHS, 1) if name != "may"
}
_MONTH = r"(" + "|".join(sorted(MONTH_NUMBERS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_DAY_MONTH_YEAR = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE)
_ISO_DAY = re.compile(r"\b((?:19|20)\d\d)-(\d{1,2})-(\d{1,2})\b")
_ZH_DAY = re.compile(r"((?:19|20)\d\d)年(\d{1,2})月(\d{1,2})[日号]")
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE)
_ZH_MONTH_YEAR = re.compile(r"((?:19|20)\d\d)年(\d{1,2})月(?!\d)")
#: a month without a year, after a word that makes it a time ("in June"; "may" is too common a verb)
_MONTH_ALONE = re.compile(
    rf"\b(?:in|during|since|until|early|late|mid|mid-|of|last|this|next)\s+{_MONTH}\b(?![\s,]*\d)", re.IGNORECASE
)
_ZH_MONTH_ALONE = re.compile(r"(?<![\d年])(\d{1,2})月份?(?![\d日号])")
#: every full date above names a year: a text without one needs no other pattern (a cheap first look)
_ANY_YEAR = re.compile(r"(?:19|20)\d\d")
_BEFORE = re.compile(r"\bbefore\b|之前|以前")
_YEAR_ALONE = re.compile(r"\b(?:in|during|since|of|from)\s+((?:19|20)\d\d)\b(?![-/])", re.IGNORECASE)
_ZH_YEAR_ALONE = re.compile(r"((?:19|20)\d\d)年(?!\d)")
_COUNTS = {word: n for n, word in enumerate("one two three four five six seven eight nine ten".split(), 1)}
_COUNTS |= {"a": 1, "an": 1, "a couple of": 2, "a few": 3, "few": 3}
_COUNTS |= {character: n for n, character in enumerate("一二三四五六七八九十", 1)} | {"两": 2, "几": 3}
_UNIT_DAYS = (
    dict.fromkeys(("day", "天", "日"), 1)
    | dict.fromkeys(("week", "周", "星期", "礼拜"), 7)
    | dict.fromkeys(("month", "月"), 30)
    | dict.fromkeys(("year", "年"), 365)
)
#: how many days before it was said a relative phrase points to ("last weekend" by the weekday)
_RELATIVE_DAYS = (
    dict.fromkeys(("yesterday", "last night", "昨天", "昨晚"), 1)
    | {"前天": 2, "the other day": 3}
    | dict.fromkeys(("last week", "上周", "上星期", "上个星期"), 7)
    | dict.fromkeys(("last month", "上月", "上个月"), 30)
    | {"last year": 365, "去年": 365, "前年": 730}
)
_RELATIVE_EN = re.compile(
    r"\b(?:yesterday|last night|the other day|last week(?:end)?|last month|last year)\b", re.IGNORECASE
)
_LAST = re.compile(r"last (?:night|week|month|year)")
_AGO_EN = re.compile(
    r"\b(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few|few)\s+"
    r"(day|week|month|year)s?\s+ago\b",
    re.IGNORECASE,
)
_RELATIVE_ZH = re.compile(
    r"昨天|昨晚|前天|上周末?|上个?星期|上个?月|去年|前年|(\d+|[一两二三四五六七八九十几])\s*个?(天|日|周|星期|礼拜|月|年)[以之]?前"
)
#: how far back "before <day>" reaches
BEFORE_DAYS = 10


@dataclass(frozen=True)
class TimeWindow:
    """What a query asks about: half-open intervals [start, end) in UTC, or a month of any year."""

    intervals: tuple[tuple[datetime, datetime], ...] = ()
    month: int | None = None

    def over_years(self, years: Iterable[int]) -> tuple[tuple[datetime, datetime], ...]:
        """The intervals, a month of any year made one interval per given year."""
        if self.month is None:
            return self.intervals
        return tuple(_month_interval(year, self.month) for year in sorted(set(years)))


#: a question about when something happened ("When did Jon lose his job?", "什么时候")
_ASKS_WHEN = re.compile(
    r"^\W*when\b|\b(?:what|which) (?:day|date|year|month|time)\b|\bhow long ago\b|什么时候|哪天|哪一年|几月|几号", re.I
)


def asks_when(text: str) -> bool:
    """Whether `text` asks when something happened. Such a question asks for an event, which keeps its date
    after the state it began has ended ("lost my job", then "running my own studio"): search leaves a
    superseded memory in its place for it instead of showing its successor first."""
    return bool(_ASKS_WHEN.search(text))


def asked_time(text: str) -> TimeWindow | None:
    """The day or month `text` asks about (module docstring), or None when it names none."""
    day = _first_day(text)
    if day is not None:
        start = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
        end = start + timedelta(days=1)
        if _BEFORE.search(text):
            start = end - timedelta(days=BEFORE_DAYS + 1)
        return TimeWindow(((start, end),))
    for pattern, month_group, year_group in ((_MONTH_YEAR, 1, 2), (_ZH_MONTH_YEAR, 2, 1)):
        match = pattern.search(text)
        month = match and _month_of(match.group(month_group))
        if month:
            return TimeWindow((_month_interval(int(match.group(year_group)), month),))
    for pattern in (_MONTH_ALONE, _ZH_MONTH_ALONE):
        match = pattern.search(text)
        month = match and _month_of(match.group(1))
        if month:
            return TimeWindow(month=month)
    for pattern in (_YEAR_ALONE, _ZH_YEAR_ALONE):
        match = pattern.search(text)
        if match:
            year = int(match.group(1))
            return TimeWindow(
                ((datetime(year, 1, 1, tzinfo=timezone.utc), datetime(year + 1, 1, 1, tzinfo=timezone.utc)),)
            )
    return None


def named_days(text: str) -> list[datetime]:
    """The full dates (day, month and year) `text` names, at midnight UTC, in order."""
    if not _ANY_YEAR.search(text):
        return []
    found = []
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy"), (_ISO_DAY, "ymd"), (_ZH_DAY, "ymd")):
        for match in pattern.finditer(text):
            day = _date(match.groups(), order)
            if day is not None:
                found.append((match.start(), day))
    return [day for _, day in sorted(found, key=lambda item: item[0])]


def memory_times(attrs: Mapping) -> list[datetime]:
    """When a stored memory is about (its stored attributes): when it was said, the days its text
    names, then the past days it names relative to when it was said."""
    said = said_at(attrs)
    content = str(attrs.get("content", ""))
    if said is None:
        return named_days(content)
    return [said, *named_days(content), *relative_days(content, said)]


def relative_days(text: str, said: datetime) -> list[datetime]:
    """The past moments `text` names relative to `said` (module docstring), in order: "last weekend"
    is the Saturday before the week `said` falls in (the one just past, said on a weekend); "N
    <units> ago" counts a month as 30 days and a year as 365."""
    lowered = text.lower()  # a cheap first look for what each pattern needs: most texts hold none
    matches = []
    if "yesterday" in lowered or "other day" in lowered or ("last " in lowered and _LAST.search(lowered)):
        matches += _RELATIVE_EN.finditer(text)
    if "ago" in lowered:
        matches += _AGO_EN.finditer(text)
    if not text.isascii():
        matches += _RELATIVE_ZH.finditer(text)
    found = []
    for match in sorted(matches, key=lambda m: m.start()):
        phrase = match.group(0).lower()
        if phrase in ("last weekend", "上周末"):
            days = said.weekday() + 2 if said.weekday() < 5 else 7
        elif phrase in _RELATIVE_DAYS:
            days = _RELATIVE_DAYS[phrase]
        else:
            count, unit = match.group(1).lower(), match.group(2)
            number = int(count) if count.isdigit() else _COUNTS.get(count, 1)
            days = number * _UNIT_DAYS[unit.lower()]
        found.append(said - timedelta(days=days))
    return found


def said_at(attrs: Mapping) -> datetime | None:
    """When a stored memory was said: its session time, else when it was written (None: unknown)."""
    source = attrs.get("source") or {}
    said = source.get("session_time") or attrs.get("created_at")
    return _as_utc(said) if said else None


def time_evidence(asked: Iterable[tuple[datetime, datetime]], attrs: Mapping, tolerance_days: float) -> float:
    """e^(−d/τ) (`time_match`) for the stored memory's time nearest the asked intervals; 0 for one with no
    time."""
    distances = [d for d in (days_outside(t, asked) for t in memory_times(attrs)) if d is not None]
    return time_match(min(distances), tolerance_days) if distances else 0.0


def days_outside(moment: datetime, intervals: Iterable[tuple[datetime, datetime]]) -> float | None:
    """How many days `moment` lies outside the nearest interval (0 inside); None without intervals."""
    best = None
    for start, end in intervals:
        gap = 0.0 if start <= moment < end else (start - moment if moment < start else moment - end).total_seconds()
        days = max(0.0, gap / 86400)
        best = days if best is None else min(best, days)
    return best


def _first_day(text: str) -> datetime | None:
    days = named_days(text)
    return days[0] if days else None


def _date(groups: tuple[str, ...], order: str) -> datetime | None:
    values = dict(zip(order, groups))
    month = _month_of(values["m"])
    try:
        return datetime(int(values["y"]), month or 0, int(values["d"]), tzinfo=timezone.utc)
    except ValueError:
        return None


def _month_of(word: str) -> int | None:
    if word.isdigit():
        return int(word) if 1 <= int(word) <= 12 else None
    return MONTH_NUMBERS.get(word.lower().rstrip("."))


def _month_interval(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=timezone.utc)
    return start, datetime(year + month // 12, month % 12 + 1, 1, tzinfo=timezone.utc)


def _as_utc(value) -> datetime:
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)
