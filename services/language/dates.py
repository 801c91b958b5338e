"""Date expressions in queries ("cette semaine", "le mois dernier", "in March 2026") and date values
in frontmatter. The current time is always a parameter: nothing here reads the clock.

Every range covers whole days in ``now``'s timezone, ``end`` exclusive. Choices worth knowing:
weeks start on Monday (ISO); "les N derniers jours" / "last N days" / "depuis N jours" is today and
the N-1 days before; "depuis X" / "since X" runs from the start of X to the end of today; a month or
day without a year is the latest one not in the future ("en décembre" said in March → last December).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

from services.language.fold import fold

Days = tuple[date, date]  # first day, day after the last one

_MONTHS = {
    "janvier": 1,
    "janv": 1,
    "january": 1,
    "jan": 1,
    "fevrier": 2,
    "fevr": 2,
    "fev": 2,
    "february": 2,
    "feb": 2,
    "mars": 3,
    "march": 3,
    "mar": 3,
    "avril": 4,
    "avr": 4,
    "april": 4,
    "apr": 4,
    "mai": 5,
    "may": 5,
    "juin": 6,
    "june": 6,
    "jun": 6,
    "juillet": 7,
    "juil": 7,
    "july": 7,
    "jul": 7,
    "aout": 8,
    "august": 8,
    "aug": 8,
    "septembre": 9,
    "september": 9,
    "sept": 9,
    "sep": 9,
    "octobre": 10,
    "october": 10,
    "oct": 10,
    "novembre": 11,
    "november": 11,
    "nov": 11,
    "decembre": 12,
    "december": 12,
    "dec": 12,
}
_NUMBERS = {
    "un": 1,
    "une": 1,
    "deux": 2,
    "trois": 3,
    "quatre": 4,
    "cinq": 5,
    "six": 6,
    "sept": 7,
    "huit": 8,
    "neuf": 9,
    "dix": 10,
    "quinze": 15,
    "vingt": 20,
    "trente": 30,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
}


@dataclass(frozen=True)
class DateRange:
    """``[start, end)`` in the query's timezone; ``matched`` is the expression as written in the text."""

    start: datetime
    end: datetime
    matched: str


def to_datetime(value: object) -> datetime | None:
    """A frontmatter date (``date``, ``datetime``, ISO string, ``YYYY-MM-DD HH:mm``) as an aware
    datetime, naive values taken as local time; ``None`` when it is not a valid date."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        parsed = datetime.combine(value, time())
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    else:
        return None
    try:
        return parsed if parsed.tzinfo else parsed.astimezone()  # astimezone() applies local DST rules
    except (OverflowError, OSError, ValueError):  # years the platform's localtime cannot handle
        return None


# --- expressions -----------------------------------------------------------------------------
# Patterns run on folded text: lowercase, accents removed, typographic apostrophes made plain.

_MONTH = "(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")(?![a-z])\.?"
_COUNT = r"(?P<n>\d{1,4}|" + "|".join(_NUMBERS) + ")"
_ISO_DAY = r"\d{4}-\d{2}-\d{2}(?![\d-])"
_DAY = (
    rf"(?:{_ISO_DAY}"
    rf"|\d{{1,2}}(?:er|st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:,?\s+\d{{4}}(?!\d))?"
    rf"|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?![\d:])(?:,?\s+\d{{4}}(?!\d))?)"
)
_DAY_NAMES = (
    "lundi mardi mercredi jeudi vendredi samedi dimanche monday tuesday wednesday thursday friday saturday sunday"
)
_WEEKDAYS = {name: i % 7 for i, name in enumerate(_DAY_NAMES.split())}
_WEEKDAY_NAMES = "|".join(_WEEKDAYS)
_WD = rf"(?P<wd>{_WEEKDAY_NAMES})(?!\s*,?\s*\d)"  # « mardi 8 décembre » is a date, said by ``_DAY``
_DAY_OR_MONTH = rf"(?:(?:le|the)\s+)?(?:{_DAY}|{_MONTH}(?:\s+\d{{4}}(?!\d))?)"
_IN = r"(?:(?:en|in|durant|during|pendant)\s+|au\s+mois\s+d(?:e\s+|'\s*))"
_SINCE = re.compile(r"(?<!\w)(?:depuis|since|a\s+partir\s+(?:de|du|d')|starting(?:\s+from)?)\s*(?:le\s+|l'|the\s+)?\Z")


def _week(day: date) -> Days:
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=7)


def _month(year: int, month: int) -> Days:
    first = date(year + (month - 1) // 12, (month - 1) % 12 + 1, 1)
    return first, _next_month(first)


def _next_month(first: date) -> date:
    return date(first.year + first.month // 12, first.month % 12 + 1, 1)


def _year(year: int) -> Days:
    return date(year, 1, 1), date(year + 1, 1, 1)


def _day(day: date) -> Days:
    return day, day + timedelta(days=1)


def _months_back(day: date, count: int) -> date:
    """The same day-of-month ``count`` months earlier, clamped to that month's last day."""
    first = _month(day.year, day.month - count)[0]
    last_day = (_next_month(first) - timedelta(days=1)).day
    return first.replace(day=min(day.day, last_day))


def _count(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBERS[text]


def _last_n(match: re.Match[str], today: date) -> Days | None:
    count, unit = _count(match["n"]), match["unit"]
    if count < 1:
        return None
    if "mois" in unit or "month" in unit:
        first = _months_back(today, count) + timedelta(days=1)
    else:
        first = today - timedelta(days=count * (7 if "sem" in unit or "week" in unit else 1) - 1)
    return first, today + timedelta(days=1)


def _days_ago(match: re.Match[str], today: date) -> Days:
    return _day(today - timedelta(days=_count(match["n"])))


def _explicit(text: str, today: date) -> Days | None:
    """A day (ISO, "12 mars 2026", "March 12") or a month ("mars 2026", "mars") written in ``text``."""
    if iso := re.search(r"\d{4}-\d{2}-\d{2}", text):
        return _day(date.fromisoformat(iso.group()))
    words = re.findall(r"[a-z]+|\d+", text)
    month = next(_MONTHS[w] for w in words if w in _MONTHS)
    year = next((int(w) for w in words if len(w) == 4 and w.isdigit()), None)
    day = next((int(w) for w in words if len(w) <= 2 and w.isdigit()), None)
    if day is None:
        return _month(year or _latest_year(today, date(today.year, month, 1)), month)
    return _day(date(year, month, day) if year else _latest(today, month, day))


def _latest_year(today: date, candidate: date) -> int:
    return candidate.year if candidate <= today else candidate.year - 1


def _latest(today: date, month: int, day: int) -> date:
    candidate = date(today.year, month, day)
    return candidate if candidate <= today else date(today.year - 1, month, day)


def _between(match: re.Match[str], today: date) -> Days | None:
    year = re.search(r"\d{4}$", match["b"])
    if year and not re.search(r"\d", match["a"]):  # « de mars à mai 2025 »: both months of 2025
        first = _explicit(f"{match['a']} {year.group()}", today)
    else:
        first = _explicit(match["a"], today)
    second = _explicit(match["b"], today)
    if first is None or second is None:
        return None
    return (first[0], second[1]) if first[0] <= second[0] else (second[0], first[1])


def _weekday(step: int) -> Callable[[re.Match[str], date], Days]:
    """A named day of the week: ``step`` 1 the next one (today excluded), -1 the last one, 0 the nearest one
    (today included, a tie going forward): « mardi » said on a Sunday is in two days, said on a Thursday two
    days ago. A calendar question names the day to come with « prochain », a note's day gone with « dernier »."""

    def build(match: re.Match[str], today: date) -> Days:
        ahead = (_WEEKDAYS[match["wd"]] - today.weekday()) % 7
        if step > 0:
            return _day(today + timedelta(days=ahead or 7))
        if step < 0:
            return _day(today - timedelta(days=(7 - ahead) % 7 or 7))
        return _day(today + timedelta(days=ahead if ahead <= 3 else ahead - 7))

    return build


def _no_weekday(text: str) -> str:
    return re.sub(rf"(?<!\w)(?:{_WEEKDAY_NAMES}),?\s+", "", text)


def _fixed(build: Callable[[date], Days]) -> Callable[[re.Match[str], date], Days]:
    return lambda _match, today: build(today)


_Build = Callable[[re.Match[str], date], Days | None]
_OF = r"(?:d'\s*)?"  # "les notes d'hier"
_RULES: list[tuple[str, _Build]] = [
    (rf"{_OF}aujourd'?\s*hui|today", _fixed(_day)),
    (rf"{_OF}avant[-\s]?hier|the\s+day\s+before\s+yesterday", _fixed(lambda t: _day(t - timedelta(days=2)))),
    (rf"{_OF}hier|yesterday", _fixed(lambda t: _day(t - timedelta(days=1)))),
    (r"apres[-\s]?demain|the\s+day\s+after\s+tomorrow", _fixed(lambda t: _day(t + timedelta(days=2)))),
    (r"demain|tomorrow", _fixed(lambda t: _day(t + timedelta(days=1)))),
    (r"cette\s+semaine|this\s+week", _fixed(_week)),
    (r"(?:la\s+)?semaine\s+prochaine|(?:the\s+)?next\s+week", _fixed(lambda t: _week(t + timedelta(days=7)))),
    (rf"(?:(?:ce|le)\s+)?{_WD}\s+prochain", _weekday(1)),
    (rf"next\s+{_WD}", _weekday(1)),
    (rf"(?:le\s+)?{_WD}\s+(?:dernier|passe)", _weekday(-1)),
    (rf"last\s+{_WD}", _weekday(-1)),
    # A bare day names one day (« mardi », « ce mardi »); « le mardi », « chaque mardi », « les mardis » are
    # habits (« le potager est arrosé le mardi »), not dates.
    (rf"(?<!\ble\s)(?<!chaque\s)(?<!tous\sles\s)(?:(?:ce|on|this)\s+)?{_WD}(?!\s+gras)", _weekday(0)),
    (
        r"(?:la\s+)?semaine\s+(?:derniere|passee|precedente)|(?:the\s+)?(?:last|previous)\s+week",
        _fixed(lambda t: _week(t - timedelta(days=7))),
    ),
    (r"ce\s+mois(?:[-\s]?ci)?|this\s+month", _fixed(lambda t: _month(t.year, t.month))),
    (
        r"(?:le\s+)?mois\s+(?:dernier|passe|precedent)|(?:the\s+)?(?:last|previous)\s+month",
        _fixed(lambda t: _month(t.year, t.month - 1)),
    ),
    (r"cette\s+annee(?:[-\s]?ci)?|this\s+year", _fixed(lambda t: _year(t.year))),
    (
        r"(?:l'\s*|l\s+)?(?:annee\s+(?:derniere|passee|precedente)|an\s+(?:dernier|passe))"
        r"|(?:the\s+)?(?:last|previous)\s+year",
        _fixed(lambda t: _year(t.year - 1)),
    ),
    (rf"(?:(?:les|ces)\s+)?{_COUNT}\s+(?P<unit>derniers\s+jours|dernieres\s+semaines|derniers\s+mois)", _last_n),
    (rf"(?:(?:in|over|during|for)\s+)?(?:the\s+)?(?:last|past)\s+{_COUNT}\s+(?P<unit>days?|weeks?|months?)", _last_n),
    (rf"depuis\s+{_COUNT}\s+(?P<unit>jours?|semaines?|mois)", _last_n),
    (rf"il\s+y\s+a\s+{_COUNT}\s+jours?", _days_ago),
    (rf"{_COUNT}\s+days?\s+ago", _days_ago),
    (rf"{_IN}?{_MONTH}\s+\d{{4}}(?!\d)|{_IN}{_MONTH}(?!\s*\d)", lambda m, t: _explicit(m.group(), t)),
    (rf"(?:{_IN}|l'annee\s+|the\s+year\s+)(?P<year>\d{{4}})(?![\d-])", lambda m, t: _year(int(m["year"]))),
    (rf"(?:(?:le|on|the)\s+)?(?:(?:{_WEEKDAY_NAMES}),?\s+)?{_DAY}", lambda m, t: _explicit(_no_weekday(m.group()), t)),
    (rf"(?:depuis|since)\s+{_MONTH}(?!\s*\d)", lambda m, t: _since(_explicit(m.group(), t), t)),
    (rf"(?:entre|between)\s+(?P<a>{_DAY_OR_MONTH})\s+(?:et|and)\s+(?P<b>{_DAY_OR_MONTH})", _between),
    (rf"(?:du|from)\s+(?P<a>{_DAY_OR_MONTH})\s+(?:au|to|until|till)\s+(?P<b>{_DAY_OR_MONTH})", _between),
    (rf"(?:de\s+|d'\s*)(?P<a>{_DAY_OR_MONTH})\s+(?:a|jusqu'\s*(?:a|au|en))\s+(?P<b>{_DAY_OR_MONTH})", _between),
]
_PATTERNS = [(re.compile(rf"(?<!\w)(?:{pattern})(?!\w)"), build) for pattern, build in _RULES]
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})


def parse_date_range(text: str, now: datetime) -> DateRange | None:
    """The first date expression in ``text`` (FR or EN, any case, with or without accents) as a range
    of whole days in ``now``'s timezone (a naive ``now`` is local time); ``None`` if there is none."""
    now = now if now.tzinfo else now.astimezone()
    folded, origin = _fold(text)
    today = now.date()
    found = _earliest(folded, today)
    if found is None:
        return None
    (start, end), days = found
    if since := _SINCE.search(folded, 0, start):  # "depuis la semaine dernière": until today
        start, days = since.start(), _since(days, today)
    return DateRange(
        _midnight(days[0], now.tzinfo), _midnight(days[1], now.tzinfo), _original(text, origin, start, end)
    )


def strip_date_expression(text: str, rng: DateRange) -> str:
    """``text`` without the words of ``rng.matched`` (and the punctuation they leave dangling)."""
    match = re.search(rf"(?<!\w){re.escape(rng.matched)}(?!\w)", text) or re.search(
        re.escape(rng.matched), text, re.IGNORECASE
    )
    if match is None:
        return text
    joined = f"{text[: match.start()].rstrip()} {text[match.end() :].lstrip()}"
    joined = re.sub(r"[,;:]\s*(?=[,;:.!?]|\Z)", "", joined)  # "notes, cette semaine, sur X" → one comma
    return re.sub(r"\s{2,}", " ", joined).strip(" \t\n,;:")


def _fold(text: str) -> tuple[str, list[int]]:
    """Lowercase, accent-free ``text`` and, for each of its characters, its index in ``text``."""
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        for part in fold(char).translate(_APOSTROPHES):  # one character at a time: each keeps its origin
            chars.append(part)
            origin.append(index)
    return "".join(chars), origin


def _original(text: str, origin: list[int], start: int, end: int) -> str:
    last = origin[end - 1] + 1
    while last < len(text) and unicodedata.combining(text[last]):  # NFD input: keep the final accent
        last += 1
    return text[origin[start] : last]


def _earliest(folded: str, today: date) -> tuple[tuple[int, int], Days] | None:
    """The leftmost expression, the longest one at that position; patterns whose values are
    impossible dates (30 février) are passed over."""
    best: tuple[tuple[int, int], Days] | None = None
    for pattern, build in _PATTERNS:
        for match in pattern.finditer(folded):
            days = _build_safely(build, match, today)
            if days is None:
                continue
            if best is None or (match.start(), -match.end()) < (best[0][0], -best[0][1]):
                best = (match.span(), days)
            break
    return best


def _build_safely(build: _Build, match: re.Match[str], today: date) -> Days | None:
    try:
        return build(match, today)
    except (ValueError, OverflowError):  # 2026-02-30, year 9999 + 1…
        return None


def _since(days: Days | None, today: date) -> Days | None:
    return (days[0], today + timedelta(days=1)) if days else None


def _midnight(day: date, tz: tzinfo | None) -> datetime:
    return datetime.combine(day, time(), tzinfo=tz)
