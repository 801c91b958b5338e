"""The language of a question: sentences by their function words, keyword lists by their words' spelling."""

from __future__ import annotations

import pytest

from services.language.detect import detect_language, spelling_lean
from tests.language.keyword_queries import ENGLISH, FRENCH


@pytest.mark.parametrize(
    "text", ["sync plan max file size storage limit", "sourdough starter feeding", "docker compose restart policy"]
)
def test_english_keyword_lists_are_english(text: str) -> None:
    assert detect_language(text) == "en"


@pytest.mark.parametrize("text", ["levain rafraîchi combien de fois", "potager partagé voisins", "taux directeurs BCE"])
def test_french_keyword_lists_are_french(text: str) -> None:
    assert detect_language(text) == "fr"


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Comment je redémarre un conteneur Docker ?", "fr"),
        ("mes notes sur Git et Python", "fr"),
        ("Comment configurer Python et Docker ?", "fr"),
        ("How do I use Docker volumes with Git?", "en"),
        ("What did I learn about keeping a sourdough starter alive?", "en"),
    ],
)
def test_technical_words_follow_the_sentence(text: str, language: str) -> None:
    assert detect_language(text) == language


def test_shared_technical_words_barely_lean() -> None:
    # Git is neither language's: it weighs nothing next to a plainly English or French word.
    assert abs(spelling_lean("git")) < 0.5 < spelling_lean("storage")
    assert spelling_lean("semaine") < -0.5


def test_most_keyword_queries_are_told_apart() -> None:
    rows = [(text, "en") for text in ENGLISH] + [(text, "fr") for text in FRENCH]
    right = sum(detect_language(text) == language for text, language in rows)
    assert right / len(rows) >= 0.9  # 0.96 (bench/language_detection.py); function words alone: 0.50


def test_ties_and_empty_text_are_french() -> None:
    assert detect_language("") == "fr"
    assert detect_language("2027") == "fr"
