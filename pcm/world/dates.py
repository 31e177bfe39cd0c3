"""Time as a key: the time a query asks about, and the times a memory is about.

A query names a time as a day ("on October 13, 2023", "13 October, 2023", "2023-10-13",
"2023年10月13日"), a month ("in July 2023", "2023年7月") or a month of any year ("in June", "6月");
"before <day>" widens a day to the `BEFORE_DAYS` days up to it ("last weekend before April 10,
2023"). A year alone says too little to rank by. A memory is about the time it was said (its
session time, else when it was written) and the days its text names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

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
    """When a stored memory is about (its stored attributes): when it was said, then the days its
    text names."""
    said = said_at(attrs)
    return ([said] if said else []) + named_days(str(attrs.get("content", "")))


def said_at(attrs: Mapping) -> datetime | None:
    """When a stored memory was said: its session time, else when it was written (None: unknown)."""
    source = attrs.get("source") or {}
    said = source.get("session_time") or attrs.get("created_at")
    return _as_utc(said) if said else None


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
