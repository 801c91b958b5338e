"""Dates said in French, as items' titles and the briefing say them."""

from __future__ import annotations

from datetime import date

DAYS = ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche")
MONTHS = (
    "janvier", "février", "mars", "avril", "mai", "juin",
    "juillet", "août", "septembre", "octobre", "novembre", "décembre",
)  # fmt: skip
SHORT_MONTHS = ("janv.", "févr.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.", "déc.")


def short_day(day: date) -> str:
    """« 28 nov. »"""
    return f"{day.day} {SHORT_MONTHS[day.month - 1]}"


def long_day(day: date) -> str:
    """« mardi 8 décembre 2026 »"""
    return f"{DAYS[day.weekday()]} {day.day} {MONTHS[day.month - 1]} {day.year}"
