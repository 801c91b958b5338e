"""Query understanding: language, intent, dates, tags, folders, follow-ups."""

from __future__ import annotations

from datetime import datetime

import pytest

from services.chat.query import Intent, detect_intent, extract_topics, names_only_a_date, understand
from services.language.detect import detect_language

NOW = datetime(2026, 11, 29, 15, 0).astimezone()


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Quels sont les objectifs du projet Atlas ?", "fr"),
        ("qu'est-ce que j'ai appris ce mois-ci sur la fermentation ?", "fr"),
        ("What did I write this week about the Atlas project?", "en"),
        ("Who was Ada Lovelace?", "en"),
        ("Atlas", "fr"),
    ],
)
def test_language(text: str, language: str) -> None:
    assert detect_language(text) == language


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("quelles sont les notes où je parle de permaculture ou de levain ?", Intent.LIST),
        ("Which notes mention Babbage?", Intent.LIST),
        ("quelles sont mes dernières notes ? fais une synthèse de cette semaine", Intent.SUMMARY),
        ("what did I write last week?", Intent.SUMMARY),
        ("Quels sont les objectifs du projet Atlas ?", Intent.ANSWER),
    ],
)
def test_intent(text: str, intent: Intent) -> None:
    assert detect_intent(text) == intent


def test_listing_topics_are_each_alternative() -> None:
    assert extract_topics("quelles sont les notes où je parle de permaculture ou de levain ?") == [
        "permaculture",
        "levain",
    ]
    assert extract_topics("Which notes mention Babbage or the Analytical Engine?") == ["Babbage", "Analytical Engine"]


def test_date_expression_becomes_a_range_and_leaves_the_query() -> None:
    plan = understand("qu'est-ce que j'ai appris ce mois-ci sur la fermentation ?", NOW)
    assert plan.since == datetime(2026, 11, 1).astimezone() and plan.until == datetime(2026, 12, 1).astimezone()
    assert "mois" not in plan.retrieval_query and "fermentation" in plan.retrieval_query
    assert plan.question.startswith("qu'est-ce que j'ai appris ce mois-ci")


def test_tags_and_folders_are_filters() -> None:
    plan = understand("que dit #projet/atlas dans le dossier Réunions ?", NOW)
    assert plan.tags == ["projet/atlas"]
    assert plan.folders == ["Réunions"]


@pytest.mark.parametrize("follow_up", ["et la durée ?", "tu as plus de détails sur les objectifs", "And who leads it?"])
def test_elliptic_follow_ups_borrow_the_previous_topic(follow_up: str) -> None:
    plan = understand(follow_up, NOW, history=["objectifs du projet Atlas"], topic="Projet Atlas")
    assert plan.is_followup
    assert plan.retrieval_query.startswith("Projet Atlas")
    assert plan.question == follow_up  # the prompt keeps the user's wording


def test_a_new_full_question_is_not_a_follow_up() -> None:
    plan = understand("Comment faire un pain au levain avec de la farine de seigle ?", NOW, history=["Atlas"])
    assert not plan.is_followup and "Atlas" not in plan.retrieval_query


@pytest.mark.parametrize(
    "question",
    [
        "qu'ai-je écrit la semaine dernière ?",  # was an answer question: quoted one note, « toutes dates confondues »
        "j'ai écrit quoi cette semaine ?",
        "qu'est-ce que j'ai fait hier ?",
        "what have I written this week?",
        "what did I do yesterday?",
    ],
)
def test_what_was_written_in_a_period_is_a_summary_of_its_notes(question: str) -> None:
    plan = understand(question, datetime(2026, 11, 29, 15, 0).astimezone())
    assert plan.intent == Intent.SUMMARY and plan.since is not None


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        ("Que disent mes notes sur le levain ?", "le levain"),
        ("qu'est-ce que mes notes disent sur Montaigne?", "Montaigne"),
        ("Qu’ai-je écrit à propos de la ratatouille ?", "la ratatouille"),
        ("What do my notes say about sourdough?", "sourdough"),
        ("What did I write about remote work?", "remote work"),
    ],
)
def test_a_question_about_the_notes_themselves_searches_its_subject(question: str, subject: str) -> None:
    """« notes », « disent », « écrit » matched every note and thinned the guard's evidence (issue #41.13)."""
    plan = understand(question, NOW)
    assert plan.retrieval_query == subject and plan.question == question


def test_a_dated_question_about_the_notes_keeps_its_period_and_searches_its_subject() -> None:
    plan = understand("Qu'ai-je écrit sur le levain la semaine dernière ?", NOW)
    assert plan.since is not None and plan.retrieval_query == "le levain"


@pytest.mark.parametrize(
    ("question", "only_a_date"),
    [
        ("Qu'est-ce que j'ai mardi ?", True),
        ("What do I have on Tuesday?", True),
        ("Qu'est-ce que j'ai chez le dentiste mardi ?", False),  # names something: the guard decides
        ("Qu'est-ce que j'ai ?", False),  # no date
        ("Résume mes notes de mars", False),  # a summary of the period
    ],
)
def test_a_question_that_names_only_a_date_is_told_apart(question: str, only_a_date: bool) -> None:
    assert names_only_a_date(understand(question, NOW)) is only_a_date
