"""Moments ahead for reminders (services/language/moments.py) and the reminder requests built on them."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from services.language.moments import Unusable, When, next_occurrence, parse_when
from services.memory.reminders import MomentQuestion, is_reminder_request, parse_reminder

PARIS = timezone(timedelta(hours=1))
NOW = datetime(2026, 12, 1, 12, 5, tzinfo=PARIS)  # a Tuesday
LOCAL_NOW = datetime(2026, 12, 1, 12, 5).astimezone()  # the confirmation says local times


@pytest.mark.parametrize(
    ("text", "due", "recurrence"),
    [
        ("dans 3 semaines", "2026-12-22T09:00", None),
        ("on Friday at 9", "2026-12-04T09:00", None),
        ("vendredi à 18h", "2026-12-04T18:00", None),
        ("mardi", "2026-12-08T09:00", None),  # today's weekday means next week's
        ("demain à 14h30", "2026-12-02T14:30", None),
        ("tomorrow morning", "2026-12-02T09:00", None),
        ("après-demain", "2026-12-03T09:00", None),
        ("in 2 hours", "2026-12-01T14:05", None),
        ("dans 10 minutes", "2026-12-01T12:15", None),
        ("à 15h", "2026-12-01T15:00", None),
        ("à 8h", "2026-12-02T08:00", None),  # passed today: tomorrow
        ("le 12 mars", "2027-03-12T09:00", None),
        ("on March 3rd at 5pm", "2027-03-03T17:00", None),
        ("le 2027-01-05 à 10:15", "2027-01-05T10:15", None),
        ("dans un mois", "2027-01-01T09:00", None),
        ("tous les lundis à 8h30", "2026-12-07T08:30", "weekly"),
        ("every day at 7pm", "2026-12-01T19:00", "daily"),
        ("tous les matins", "2026-12-02T09:00", "daily"),
        ("tous les soirs", "2026-12-01T19:00", "daily"),
        ("tous les mois", "2027-01-01T09:00", "monthly"),
    ],
)
def test_moments_ahead(text: str, due: str, recurrence: str | None) -> None:
    when = parse_when(text, NOW)
    assert when is not None
    assert (when.due.isoformat()[:16], when.recurrence) == (due, recurrence)
    assert when.due > NOW


def test_no_moment_and_no_clock_words() -> None:
    assert parse_when("relancer Sophie sur le chat", NOW) is None
    assert parse_when("le budget 2028", NOW) is None


def test_recurrences_move_past_now() -> None:
    first = datetime(2026, 12, 7, 8, 30, tzinfo=PARIS)
    assert next_occurrence(first, "weekly", first + timedelta(days=15)) == first + timedelta(weeks=3)
    assert next_occurrence(datetime(2026, 1, 31, 9, tzinfo=PARIS), "monthly", NOW.replace(month=2, day=1)).day == 28


@pytest.mark.parametrize(
    ("request_text", "text", "due", "language"),
    [
        ("rappelle-moi dans 3 semaines de relancer Sophie", "relancer Sophie", "2026-12-22T09:00", "fr"),
        ("Remind me on Friday at 9 to send the report", "send the report", "2026-12-04T09:00", "en"),
        ("rappelle moi de payer les impôts le 12 mars", "payer les impôts", "2027-03-12T09:00", "fr"),
        ("Rappelle-moi demain à 14h30 d'appeler le garage", "appeler le garage", "2026-12-02T14:30", "fr"),
        ("fais-moi penser tous les lundis à faire le point", "faire le point", "2026-12-07T09:00", "fr"),
    ],
)
def test_reminder_requests(request_text: str, text: str, due: str, language: str) -> None:
    assert is_reminder_request(request_text)
    draft = parse_reminder(request_text, NOW)
    assert draft is not None
    assert (draft.text, draft.due_at.isoformat()[:16], draft.language) == (text, due, language)
    assert text in draft.confirmation()


def test_the_confirmation_says_the_day_in_words() -> None:
    draft = parse_reminder("rappelle-moi dans 3 semaines de relancer Sophie", NOW)
    assert draft is not None and "le mardi 22 décembre 2026" in draft.confirmation()
    assert draft.confirmation().endswith("Je l'enregistre ?")
    weekly = parse_reminder("rappelle-moi tous les lundis de sortir les poubelles", NOW)
    assert weekly is not None and "(chaque semaine)" in weekly.confirmation()


def test_requests_without_moment_or_text_are_not_reminders() -> None:
    assert not is_reminder_request("quel temps fait-il demain ?")
    assert parse_reminder("rappelle-moi de relancer Sophie", NOW) is None
    assert parse_reminder("rappelle-moi demain", NOW) is None


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("le 31 février de relancer Claire", "le 31 février"),
        ("on February 30 to call Bob", "on February 30"),
        ("le 2027-02-29 à 10h", "le 2027-02-29"),
        ("le 29 février 2027", "le 29 février 2027"),
    ],
)
def test_an_impossible_day_is_said_not_raised(text: str, words: str) -> None:
    when = parse_when(text, NOW)
    assert isinstance(when, Unusable) and (when.reason, when.words) == ("impossible", words)


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("le 3 janvier 2020 à 9h de payer la facture", "2020-01-03T09:00"),  # was saved for the 4th, due at once
        ("hier à 9h de relancer Marc", "2026-11-30T09:00"),  # was saved for tomorrow 09:00
        ("avant-hier", "2026-11-29T09:00"),
        ("yesterday at 5pm", "2026-11-30T17:00"),
        ("aujourd'hui à 8h", "2026-12-01T08:00"),  # a named day is never moved to the next one
        ("le 1er décembre à 8h", "2026-12-01T08:00"),
    ],
)
def test_a_past_day_is_said_never_moved(text: str, moment: str) -> None:
    when = parse_when(text, NOW)
    assert isinstance(when, Unusable) and when.reason == "past"
    assert when.moment is not None and when.moment.isoformat()[:16] == moment


def test_a_29th_of_february_without_a_year_is_the_next_one() -> None:
    when = parse_when("le 29 février", NOW)
    assert isinstance(when, When) and when.due.isoformat()[:16] == "2028-02-29T09:00"


@pytest.mark.parametrize(
    ("request_text", "question"),
    [
        (
            "rappelle-moi le 31 février de relancer Claire",
            "Le 31 février n'existe pas : pour quel jour veux-tu ce rappel (« relancer Claire ») ?",
        ),
        (
            "remind me on February 30 to call Bob",
            "There is no February 30: which day do you want this reminder (“call Bob”) for?",
        ),
        (
            "rappelle-moi le 3 janvier 2020 à 9h de payer la facture",
            "Le vendredi 3 janvier 2020 à 09:00 est déjà passé : pour quand veux-tu ce rappel (« payer la facture ») ?",
        ),
        (
            "rappelle-moi hier à 9h de relancer Marc",
            "Le lundi 30 novembre 2026 à 09:00 est déjà passé : pour quand veux-tu ce rappel (« relancer Marc ») ?",
        ),
        (
            "remind me yesterday at 9 to call Bob",
            "Monday 30 November 2026 at 09:00 has already passed: when do you want this reminder (“call Bob”) for?",
        ),
    ],
)
def test_a_reminder_on_an_impossible_or_past_day_is_a_question(request_text: str, question: str) -> None:
    asked = parse_reminder(request_text, LOCAL_NOW)
    assert isinstance(asked, MomentQuestion) and asked.question() == question
