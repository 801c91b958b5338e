"""Moments ahead, for reminders: "dans 3 semaines", "vendredi à 9h", "tomorrow at 14:30", "tous les lundis".

``services/language/dates.py`` reads past ranges for search filters; this module reads one future moment (and
an optional recurrence) with the same folding and vocabulary. Nothing here reads the clock: ``now`` is
a parameter, a naive ``now`` is local time. A day without a time of day gets ``DEFAULT_TIME`` (09:00).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Literal

from services.language.dates import _MONTHS, _NUMBERS, _fold, _original

DEFAULT_TIME = time(9, 0)
_WEEKDAYS = {
    "lundi": 0,
    "mardi": 1,
    "mercredi": 2,
    "jeudi": 3,
    "vendredi": 4,
    "samedi": 5,
    "dimanche": 6,
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
}
_PARTS_OF_DAY = {
    "matin": time(9),
    "morning": time(9),
    "midi": time(12),
    "noon": time(12),
    "apres-midi": time(14),
    "afternoon": time(14),
    "soir": time(19),
    "evening": time(19),
    "tonight": time(19),
}
_WD = "(?P<wd>" + "|".join(_WEEKDAYS) + ")s?"
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_N = r"(?P<n>\d{1,3}|une?|an?|" + "|".join(_NUMBERS) + ")"
_UNIT = r"(?P<unit>minutes?|mins?|heures?|hours?|h|jours?|days?|semaines?|weeks?|mois|months?|ans?|years?)"

_RECURRENCE = [
    (re.compile(rf"(?:tous\s+les|chaque|every)\s+{_WD}"), "weekly"),
    (re.compile(r"tous\s+les\s+jours|chaque\s+jour|every\s+day|daily|quotidiennement"), "daily"),
    (re.compile(r"tous\s+les\s+(?P<pod>matin|soir)s|every\s+(?P<pod2>morning|evening)"), "daily"),
    (re.compile(r"toutes\s+les\s+semaines|chaque\s+semaine|every\s+week|weekly"), "weekly"),
    (re.compile(r"tous\s+les\s+mois|chaque\s+mois|every\s+month|monthly"), "monthly"),
]
_OFFSET = re.compile(rf"(?:dans|in|d'ici)\s+{_N}\s+{_UNIT}(?![a-z])")
_RELATIVE_DAY = re.compile(
    r"apres[-\s]demain|the\s+day\s+after\s+tomorrow|demain|tomorrow|aujourd'\s*hui|today|ce\s+soir|tonight"
    r"|avant[-\s]hier|the\s+day\s+before\s+yesterday|hier|yesterday"  # past: said back, never saved
)
_DAY_SHIFTS = {
    "apres": 2,
    "the day after": 2,
    "demain": 1,
    "tomorrow": 1,
    "avant": -2,
    "the day before": -2,
    "hier": -1,
    "yesterday": -1,
}
_WEEKDAY = re.compile(rf"(?:(?:le|on|this|next|ce)\s+)?(?P<wd>{'|'.join(_WEEKDAYS)})(?:\s+(?:prochain|qui\s+vient))?")
_DAY = re.compile(
    rf"(?:(?:le|on|the)\s+)?(?:(?P<iso>\d{{4}}-\d{{2}}-\d{{2}})|(?P<d>\d{{1,2}})(?:er|st|nd|rd|th)?\s+(?:of\s+)?(?P<month>{_MONTH_NAMES})\.?"
    rf"(?:\s+(?P<y>\d{{4}}))?|(?P<month2>{_MONTH_NAMES})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y2>\d{{4}}))?)(?![\d:])"
)
_TIME = re.compile(
    r"(?:(?:a|at|vers|around|@)\s*)?(?P<h>\d{1,2})\s*(?:h|:|heures?)\s*(?P<m>\d{2})?(?:\s*(?P<ap>am|pm))?(?![\d])"
    r"|(?:a|at)\s+(?P<h2>\d{1,2})(?:\s*(?P<ap2>am|pm))?(?![\d:h])"
    r"|(?P<h3>\d{1,2})\s*(?P<ap3>am|pm)"
)
_TIME_WORD = re.compile(
    r"(?:(?:le|du|ce|in\s+the|this|at)\s+)?(?P<pod>matin|apres-midi|midi|soir|morning|afternoon|noon|evening)"
)


@dataclass(frozen=True)
class When:
    """``due``: the first moment, tz-aware; ``recurrence``: None, "daily", "weekly" or "monthly";
    ``matched``: the words of ``text`` that said it (to strip them from a reminder's text)."""

    due: datetime
    recurrence: str | None
    matched: tuple[str, ...]


@dataclass(frozen=True)
class Unusable:
    """A moment ``text`` names that no reminder can take, to be asked about: ``reason`` is "impossible"
    (31 février: ``words`` are the day as written) or "past" (hier, le 3 janvier 2020: ``moment`` is when)."""

    reason: Literal["impossible", "past"]
    matched: tuple[str, ...]
    words: str = ""
    moment: datetime | None = None


def parse_when(text: str, now: datetime) -> When | Unusable | None:
    """The moment ``text`` asks for, strictly after ``now``; None when it names none. A named day is never
    moved: when it does not exist or has passed, ``Unusable`` says so (only a bare time of day that has
    passed today, "à 8h", means tomorrow's, and a recurrence its next occurrence)."""
    now = now if now.tzinfo else now.astimezone()
    folded, origin = _fold(text)
    spans: list[tuple[int, int]] = []
    recurrence, day, usual = _recurrence(folded, now, spans)
    exact, impossible = None, ""
    if recurrence is None:
        try:
            day, exact = _day(folded, now, spans)
        except (ValueError, OverflowError):  # 31 février, 2026-02-30, dans 9000 ans
            impossible = _original(text, origin, *spans[-1])
    at = _time_of_day(folded, spans) or usual
    matched = tuple(_original(text, origin, s, e) for s, e in sorted(spans))
    if impossible:
        return Unusable("impossible", matched, words=impossible)
    if exact is not None:
        due = exact
    elif day is not None or at is not None or recurrence:
        due = _combine(day or now.date(), at or DEFAULT_TIME, now)
        if due <= now and (recurrence or day is None):
            due = _next_period(due, recurrence) if recurrence else due + timedelta(days=1)
    else:
        return None
    return When(due, recurrence, matched) if due > now else Unusable("past", matched, moment=due)


def next_occurrence(due: datetime, recurrence: str, now: datetime) -> datetime:
    """The first repetition of ``due`` strictly after ``now``."""
    while due <= now:
        due = _next_period(due, recurrence)
    return due


def _recurrence(
    folded: str, now: datetime, spans: list[tuple[int, int]]
) -> tuple[str | None, date | None, time | None]:
    for pattern, kind in _RECURRENCE:
        if match := _search(pattern, folded):
            spans.append(match.span())
            groups = match.groupdict()
            day = _next_weekday(now.date(), _WEEKDAYS[groups["wd"]], include_today=True) if groups.get("wd") else None
            part = groups.get("pod") or groups.get("pod2")
            return kind, day, _PARTS_OF_DAY[part] if part else None
    return None, None, None


def _day(folded: str, now: datetime, spans: list[tuple[int, int]]) -> tuple[date | None, datetime | None]:
    if match := _search(_OFFSET, folded):
        spans.append(match.span())
        return _offset(match, now)
    if match := _search(_RELATIVE_DAY, folded):
        spans.append(match.span())
        shift = next((n for start, n in _DAY_SHIFTS.items() if match[0].startswith(start)), 0)
        return now.date() + timedelta(days=shift), None
    if match := _search(_DAY, folded):
        spans.append(match.span())
        return _explicit_day(match, now.date()), None
    if match := _search(_WEEKDAY, folded):
        spans.append(match.span())
        return _next_weekday(now.date(), _WEEKDAYS[match["wd"]], include_today=False), None
    return None, None


def _offset(match: re.Match[str], now: datetime) -> tuple[date | None, datetime | None]:
    word, unit = match["n"], match["unit"]
    count = int(word) if word.isdigit() else 1 if word in ("un", "une", "a", "an") else _NUMBERS[word]
    if unit.startswith(("min", "h")):
        return None, now + timedelta(minutes=count * (1 if unit.startswith("min") else 60))
    if unit.startswith(("jour", "day")):
        return now.date() + timedelta(days=count), None
    if unit.startswith(("sem", "week")):
        return now.date() + timedelta(weeks=count), None
    if unit.startswith(("an", "year")):
        return _add_months(now.date(), 12 * count), None
    return _add_months(now.date(), count), None


def _explicit_day(match: re.Match[str], today: date) -> date | None:
    if match["iso"]:
        return date.fromisoformat(match["iso"])
    month = _MONTHS[match["month"] or match["month2"]]
    day = int(match["d"] or match["d2"])
    year = match["y"] or match["y2"]
    if year:
        return date(int(year), month, day)  # ValueError when that day does not exist
    for ahead in range(9):  # the next one: "le 29 février" said in 2026 is 2028's
        with contextlib.suppress(ValueError):
            if (candidate := date(today.year + ahead, month, day)) >= today:
                return candidate
    raise ValueError(f"no day {day} in month {month}")


def _time_of_day(folded: str, spans: list[tuple[int, int]]) -> time | None:
    taken = [range(s, e) for s, e in spans]
    for match in _TIME.finditer(folded):
        if any(match.start() in r for r in taken) or not _alone(folded, match):
            continue
        hour = int(match["h"] or match["h2"] or match["h3"])
        minute = int(match["m"] or 0)
        if (match["ap"] or match["ap2"] or match["ap3"]) == "pm" and hour < 12:
            hour += 12
        if hour < 24 and minute < 60:
            spans.append(match.span())
            return time(hour, minute)
    if match := _search(_TIME_WORD, folded):
        spans.append(match.span())
        return _PARTS_OF_DAY[match["pod"]]
    return None


def _search(pattern: re.Pattern[str], folded: str) -> re.Match[str] | None:
    return next((m for m in pattern.finditer(folded) if _alone(folded, m)), None)


def _alone(folded: str, match: re.Match[str]) -> bool:
    """Whole words only: "h" in "chat" or "8" in "2028" is no time."""
    before = folded[match.start() - 1] if match.start() else " "
    after = folded[match.end()] if match.end() < len(folded) else " "
    return not before.isalnum() and not (after.isalnum() and match[0][-1].isalnum())


def _next_weekday(today: date, weekday: int, include_today: bool) -> date:
    ahead = (weekday - today.weekday()) % 7
    return today + timedelta(days=ahead if ahead or include_today else 7)


def _combine(day: date, at: time, now: datetime) -> datetime:
    return datetime.combine(day, at, tzinfo=now.tzinfo)


def _add_months(day: date, count: int) -> date:
    month = day.month - 1 + count
    year, month = day.year + month // 12, month % 12 + 1
    for last in (31, 30, 29, 28):
        try:
            return date(year, month, min(day.day, last))
        except ValueError:
            continue
    raise ValueError(day)


def _next_period(due: datetime, recurrence: str | None) -> datetime:
    if recurrence == "daily":
        return due + timedelta(days=1)
    if recurrence == "monthly":
        return datetime.combine(_add_months(due.date(), 1), due.timetz())
    return due + timedelta(weeks=1)


def parse_clock(text: str, setting: str = "time") -> time:
    """``HH:MM`` as a time; ValueError naming ``setting`` otherwise."""
    match = re.fullmatch(r"\s*(\d{1,2}):(\d{2})\s*", text)
    if match is None or int(match[1]) > 23 or int(match[2]) > 59:
        raise ValueError(f"{setting} must look like 07:00, got {text!r}")
    return time(int(match[1]), int(match[2]))
