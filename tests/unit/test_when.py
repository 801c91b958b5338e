"""Moments ahead for reminders (services/language/moments.py) and the reminder requests built on them."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from services.language.moments import next_occurrence, parse_when
from services.memory.reminders import is_reminder_request, parse_reminder

PARIS = timezone(timedelta(hours=1))
NOW = datetime(2026, 12, 1, 12, 5, tzinfo=PARIS)  # a Tuesday


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
