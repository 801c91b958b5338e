"""services.language.dates: FR/EN date expressions as day ranges in now's timezone, and frontmatter date values."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from services.language.dates import DateRange, parse_date_range, strip_date_expression, to_datetime

PARIS = ZoneInfo("Europe/Paris")
SUNDAY = datetime(2026, 11, 29, 15, 0, tzinfo=PARIS)  # the day after a week ends is the interesting case
WEDNESDAY = datetime(2026, 3, 11, 9, 30, tzinfo=PARIS)
NEW_YEAR = datetime(2027, 1, 1, 10, 0, tzinfo=PARIS)  # a Friday: this week started last year


def days(first: date, after_last: date) -> tuple[datetime, datetime]:
    return datetime(first.year, first.month, first.day, tzinfo=PARIS), datetime(
        after_last.year, after_last.month, after_last.day, tzinfo=PARIS
    )


def span(text: str, now: datetime = SUNDAY) -> tuple[datetime, datetime]:
    found = parse_date_range(text, now)
    assert found is not None, text
    return found.start, found.end


D = date


@pytest.mark.parametrize(
    ("text", "first", "after_last"),
    [
        ("aujourd'hui", D(2026, 11, 29), D(2026, 11, 30)),
        ("Aujourd’hui", D(2026, 11, 29), D(2026, 11, 30)),
        ("AUJOURDHUI", D(2026, 11, 29), D(2026, 11, 30)),
        ("hier", D(2026, 11, 28), D(2026, 11, 29)),
        ("avant-hier", D(2026, 11, 27), D(2026, 11, 28)),
        ("avant hier", D(2026, 11, 27), D(2026, 11, 28)),
        ("cette semaine", D(2026, 11, 23), D(2026, 11, 30)),
        ("la semaine dernière", D(2026, 11, 16), D(2026, 11, 23)),
        ("la SEMAINE DERNIERE", D(2026, 11, 16), D(2026, 11, 23)),
        ("la semaine passée", D(2026, 11, 16), D(2026, 11, 23)),
        ("ce mois-ci", D(2026, 11, 1), D(2026, 12, 1)),
        ("ce mois", D(2026, 11, 1), D(2026, 12, 1)),
        ("le mois dernier", D(2026, 10, 1), D(2026, 11, 1)),
        ("le mois passé", D(2026, 10, 1), D(2026, 11, 1)),
        ("cette année", D(2026, 1, 1), D(2027, 1, 1)),
        ("l'année dernière", D(2025, 1, 1), D(2026, 1, 1)),
        ("l’année passée", D(2025, 1, 1), D(2026, 1, 1)),
        ("l'an dernier", D(2025, 1, 1), D(2026, 1, 1)),
        ("les 7 derniers jours", D(2026, 11, 23), D(2026, 11, 30)),
        ("ces trois derniers jours", D(2026, 11, 27), D(2026, 11, 30)),
        ("les 2 dernières semaines", D(2026, 11, 16), D(2026, 11, 30)),
        ("les 3 derniers mois", D(2026, 8, 30), D(2026, 11, 30)),
        ("depuis 3 jours", D(2026, 11, 27), D(2026, 11, 30)),
        ("il y a deux jours", D(2026, 11, 27), D(2026, 11, 28)),
        ("en mars 2026", D(2026, 3, 1), D(2026, 4, 1)),
        ("en mars", D(2026, 3, 1), D(2026, 4, 1)),
        ("en novembre", D(2026, 11, 1), D(2026, 12, 1)),
        ("en décembre", D(2025, 12, 1), D(2026, 1, 1)),  # December 2026 is still to come
        ("au mois d'août", D(2026, 8, 1), D(2026, 9, 1)),
        ("février 2025", D(2025, 2, 1), D(2025, 3, 1)),
        ("en 2025", D(2025, 1, 1), D(2026, 1, 1)),
        ("le 12 mars 2026", D(2026, 3, 12), D(2026, 3, 13)),
        ("le 1er mai", D(2026, 5, 1), D(2026, 5, 2)),
        ("le 30 novembre", D(2025, 11, 30), D(2025, 12, 1)),  # tomorrow: so last year's
        ("2026-03-12", D(2026, 3, 12), D(2026, 3, 13)),
        ("le 2026-03-12", D(2026, 3, 12), D(2026, 3, 13)),
        ("depuis le 2026-03-01", D(2026, 3, 1), D(2026, 11, 30)),
        ("depuis hier", D(2026, 11, 28), D(2026, 11, 30)),
        ("depuis la semaine dernière", D(2026, 11, 16), D(2026, 11, 30)),
        ("depuis février", D(2026, 2, 1), D(2026, 11, 30)),
        ("à partir du 3 mars", D(2026, 3, 3), D(2026, 11, 30)),
        ("entre le 2026-03-01 et le 2026-03-05", D(2026, 3, 1), D(2026, 3, 6)),
        ("entre le 12 mars et le 3 avril", D(2026, 3, 12), D(2026, 4, 4)),
        ("entre le 5 avril et le 12 mars", D(2026, 3, 12), D(2026, 4, 6)),
        ("entre janvier et mars", D(2026, 1, 1), D(2026, 4, 1)),
        ("du 1er mars au 15 mars 2026", D(2026, 3, 1), D(2026, 3, 16)),
    ],
)
def test_french_expressions(text: str, first: date, after_last: date) -> None:
    assert span(text) == days(first, after_last)


@pytest.mark.parametrize(
    ("text", "first", "after_last"),
    [
        ("today", D(2026, 11, 29), D(2026, 11, 30)),
        ("yesterday", D(2026, 11, 28), D(2026, 11, 29)),
        ("the day before yesterday", D(2026, 11, 27), D(2026, 11, 28)),
        ("this week", D(2026, 11, 23), D(2026, 11, 30)),
        ("last week", D(2026, 11, 16), D(2026, 11, 23)),
        ("this month", D(2026, 11, 1), D(2026, 12, 1)),
        ("last month", D(2026, 10, 1), D(2026, 11, 1)),
        ("this year", D(2026, 1, 1), D(2027, 1, 1)),
        ("last year", D(2025, 1, 1), D(2026, 1, 1)),
        ("in March 2026", D(2026, 3, 1), D(2026, 4, 1)),
        ("in March", D(2026, 3, 1), D(2026, 4, 1)),
        ("in 2024", D(2024, 1, 1), D(2025, 1, 1)),
        ("last 7 days", D(2026, 11, 23), D(2026, 11, 30)),
        ("in the past 2 weeks", D(2026, 11, 16), D(2026, 11, 30)),
        ("over the last two months", D(2026, 9, 30), D(2026, 11, 30)),
        ("3 days ago", D(2026, 11, 26), D(2026, 11, 27)),
        ("on 2026-03-12", D(2026, 3, 12), D(2026, 3, 13)),
        ("March 12, 2026", D(2026, 3, 12), D(2026, 3, 13)),
        ("on the 3rd of May", D(2026, 5, 3), D(2026, 5, 4)),
        ("since 2026-03-01", D(2026, 3, 1), D(2026, 11, 30)),
        ("since last month", D(2026, 10, 1), D(2026, 11, 30)),
        ("between 2026-01-10 and 2026-01-20", D(2026, 1, 10), D(2026, 1, 21)),
        ("from March 1 to March 3", D(2026, 3, 1), D(2026, 3, 4)),
    ],
)
def test_english_expressions(text: str, first: date, after_last: date) -> None:
    assert span(text) == days(first, after_last)


@pytest.mark.parametrize(
    ("text", "first", "after_last"),
    [
        ("aujourd'hui", D(2026, 3, 11), D(2026, 3, 12)),
        ("cette semaine", D(2026, 3, 9), D(2026, 3, 16)),
        ("this week", D(2026, 3, 9), D(2026, 3, 16)),
        ("la semaine dernière", D(2026, 3, 2), D(2026, 3, 9)),
        ("le mois dernier", D(2026, 2, 1), D(2026, 3, 1)),
        ("en mars", D(2026, 3, 1), D(2026, 4, 1)),
        ("en avril", D(2025, 4, 1), D(2025, 5, 1)),
        ("le 12 mars", D(2025, 3, 12), D(2025, 3, 13)),
        ("le 11 mars", D(2026, 3, 11), D(2026, 3, 12)),
        ("les 7 derniers jours", D(2026, 3, 5), D(2026, 3, 12)),
    ],
)
def test_mid_week(text: str, first: date, after_last: date) -> None:
    assert span(text, WEDNESDAY) == days(first, after_last)


@pytest.mark.parametrize(
    ("text", "first", "after_last"),
    [
        ("le mois dernier", D(2026, 12, 1), D(2027, 1, 1)),
        ("last month", D(2026, 12, 1), D(2027, 1, 1)),
        ("l'année dernière", D(2026, 1, 1), D(2027, 1, 1)),
        ("cette semaine", D(2026, 12, 28), D(2027, 1, 4)),
        ("la semaine dernière", D(2026, 12, 21), D(2026, 12, 28)),
        ("hier", D(2026, 12, 31), D(2027, 1, 1)),
        ("en décembre", D(2026, 12, 1), D(2027, 1, 1)),
        ("entre le 20 décembre et le 1er janvier", D(2026, 12, 20), D(2027, 1, 2)),
        ("les 3 derniers mois", D(2026, 10, 2), D(2027, 1, 2)),
    ],
)
def test_year_boundaries(text: str, first: date, after_last: date) -> None:
    assert span(text, NEW_YEAR) == days(first, after_last)


def test_month_end_clamping() -> None:
    may_31 = datetime(2026, 5, 31, 12, tzinfo=PARIS)
    assert span("le mois dernier", may_31) == days(D(2026, 4, 1), D(2026, 5, 1))
    assert span("les 3 derniers mois", may_31) == days(D(2026, 3, 1), D(2026, 6, 1))  # Feb 31 → Feb 28, +1 day


def test_ranges_are_midnights_in_nows_timezone_across_dst() -> None:
    start, end = span("le mois dernier")  # October 2026: summer time ends on the 25th
    assert start.utcoffset() == timedelta(hours=2) and end.utcoffset() == timedelta(hours=1)
    tokyo = datetime(2026, 11, 29, 8, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
    assert span("today", tokyo) == (
        datetime(2026, 11, 29, tzinfo=ZoneInfo("Asia/Tokyo")),
        datetime(2026, 11, 30, tzinfo=ZoneInfo("Asia/Tokyo")),
    )


def test_naive_now_is_local_time() -> None:
    found = parse_date_range("today", datetime(2026, 11, 29, 15, 0))
    assert found is not None and found.start.tzinfo is not None
    assert found.start == datetime(2026, 11, 29).astimezone()


def test_matched_is_the_text_as_written() -> None:
    found = parse_date_range("Notes de La Semaine Passée sur Atlas", SUNDAY)
    assert found == DateRange(*days(D(2026, 11, 16), D(2026, 11, 23)), matched="La Semaine Passée")


def test_decomposed_accents_are_kept_in_matched() -> None:
    text = "cette anne\u0301e"  # NFD, as macOS may type it
    found = parse_date_range(text, SUNDAY)
    assert found is not None and found.matched == text


def test_leftmost_expression_wins() -> None:
    found = parse_date_range("hier et aujourd'hui", SUNDAY)
    assert found is not None and found.matched == "hier"
    found = parse_date_range("avant-hier", SUNDAY)
    assert found is not None and found.matched == "avant-hier"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "rien à signaler",
        "la hiérarchie des notes",
        "la planète mars",
        "you may want this",
        "version 2026",
        "le 30 février",
        "2026-02-30",
        "les 0 derniers jours",
        "this weekend",
    ],
)
def test_no_expression(text: str) -> None:
    assert parse_date_range(text, SUNDAY) is None


@pytest.mark.parametrize(
    ("text", "stripped"),
    [
        ("qu'est-ce que j'ai écrit cette semaine sur Atlas", "qu'est-ce que j'ai écrit sur Atlas"),
        ("Cette semaine, qu'ai-je lu ?", "qu'ai-je lu ?"),
        ("les notes d'hier ?", "les notes ?"),
        ("notes, le mois dernier, sur Atlas", "notes, sur Atlas"),
        ("what did I write last week about Atlas", "what did I write about Atlas"),
        ("réunions depuis le 2026-03-01", "réunions"),
        ("hier", ""),
    ],
)
def test_strip_date_expression(text: str, stripped: str) -> None:
    found = parse_date_range(text, SUNDAY)
    assert found is not None
    assert strip_date_expression(text, found) == stripped


def test_strip_only_removes_whole_words() -> None:
    text = "hiérarchie hier"
    found = parse_date_range(text, SUNDAY)
    assert found is not None and strip_date_expression(text, found) == "hiérarchie"
    assert strip_date_expression("rien", found) == "rien"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (date(2026, 3, 12), datetime(2026, 3, 12).astimezone()),
        (datetime(2026, 3, 12, 10, 30), datetime(2026, 3, 12, 10, 30).astimezone()),
        (datetime(2026, 3, 12, 10, 30, tzinfo=UTC), datetime(2026, 3, 12, 10, 30, tzinfo=UTC)),
        ("2026-03-12", datetime(2026, 3, 12).astimezone()),
        ("2026-03-12 10:30", datetime(2026, 3, 12, 10, 30).astimezone()),
        ("2026-03-12T10:30:00Z", datetime(2026, 3, 12, 10, 30, tzinfo=UTC)),
        (" 2026-03-12T10:30:00+02:00 ", datetime(2026, 3, 12, 8, 30, tzinfo=UTC)),
        ("not a date", None),
        ("2026-02-30", None),
        (20260312.0, None),
        (None, None),
        (["2026-03-12"], None),
    ],
)
def test_to_datetime(value: object, expected: datetime | None) -> None:
    result = to_datetime(value)
    assert result == expected
    assert result is None or result.tzinfo is not None


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("qu'est-ce que j'ai mardi ?", D(2026, 3, 10)),  # said on a Wednesday: yesterday is the nearest Tuesday
        ("qu'est-ce que j'ai vendredi ?", D(2026, 3, 13)),
        ("ce mercredi", D(2026, 3, 11)),  # today
        ("samedi", D(2026, 3, 14)),  # three days ahead is nearer than four days back
        ("dimanche", D(2026, 3, 8)),
        ("mardi prochain", D(2026, 3, 17)),
        ("mercredi prochain", D(2026, 3, 18)),  # today excluded
        ("lundi dernier", D(2026, 3, 9)),
        ("next Friday", D(2026, 3, 13)),
        ("what did I do last Wednesday", D(2026, 3, 4)),
        ("demain", D(2026, 3, 12)),
        ("après-demain", D(2026, 3, 13)),
        ("le mardi 10 mars", D(2026, 3, 10)),  # a date with its day name is that date
    ],
)
def test_a_named_day_is_one_day(text: str, first: date) -> None:
    assert span(text, WEDNESDAY) == days(first, first + timedelta(days=1))


def test_next_week_and_habits_that_are_no_dates() -> None:
    assert span("la semaine prochaine", WEDNESDAY) == days(D(2026, 3, 16), D(2026, 3, 23))
    for habit in ("On arrose le potager le mardi", "chaque mardi", "tous les mardis", "mardi gras"):
        assert parse_date_range(habit, WEDNESDAY) is None, habit
