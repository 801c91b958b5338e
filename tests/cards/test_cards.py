"""Flashcards (issue #36 points 1–2): made from a note by the model (validated JSON) or by rules, written as
Markdown the Spaced Repetition plugin reads, scheduled by FSRS in the catalog; a user's edits kept, a deleted
card retired, a changed source flagged, a grade undone."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from services.cards.deck import parse_cards
from services.cards.make import MAX_CARDS
from services.cards.review import grade, make_for_note, source_changed, sync_deck
from services.catalog import Catalog
from services.config import Settings
from services.llm.client import StreamGenerator
from services.llm.models import GenerationRequest, StreamEvent
from services.vault import split_frontmatter
from tests.conftest import copy_sample_vault

NOW = datetime(2026, 12, 4, 9, 0).astimezone()
LEXIQUE = "Lexique.md"
LEVAIN = "Cuisine/Pain au levain.md"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    copy_sample_vault(tmp_path / "vault")
    return Settings(_env_file=None, vault=tmp_path / "vault", data_dir=tmp_path / "data")


@pytest.fixture
def catalog(settings: Settings) -> Iterator[Catalog]:
    catalog = Catalog(settings.catalog_path)
    yield catalog
    catalog.close()


def replying(text: str) -> StreamGenerator:
    def stream(request: GenerationRequest) -> Iterator[StreamEvent]:
        yield StreamEvent(kind="token", text=text)
        yield StreamEvent(kind="done", finish_reason="stop")

    return StreamGenerator(stream)


def test_rules_make_cards_from_a_glossary_in_the_spaced_repetition_format(settings: Settings, catalog: Catalog) -> None:
    before = (settings.vault / LEXIQUE).read_bytes()
    made = make_for_note(settings, catalog, LEXIQUE, NOW)
    assert made.method == "rules" and made.file == "obsirag/cards/Lexique_personnel.md"
    text = (settings.vault / made.file).read_text(encoding="utf-8")
    meta, _error, body = split_frontmatter(text)
    assert meta["source"] == "[[Lexique]]" and meta["tags"] == ["flashcards"] and body.startswith("#flashcards")
    line = next(line for line in body.splitlines() if line.startswith("Que signifie « Lambert 93 »"))
    assert "::projection cartographique officielle" in line
    assert line.endswith("[[Lexique#Cartographie et données|Lexique]]")  # back to its section
    assert "Que signifie « Terme » ?" not in text  # a table's header row is no card
    assert len(made.cards) == MAX_CARDS and all(r.due == NOW for r in catalog.cards(due_before=NOW))
    rest = make_for_note(settings, catalog, LEXIQUE, NOW)  # at most twelve at a time: the rest now
    assert rest.cards and len(catalog.cards()) == len(made.cards) + len(rest.cards)
    text = (settings.vault / made.file).read_text(encoding="utf-8")
    again = make_for_note(settings, catalog, LEXIQUE, NOW)
    assert again.cards == [] and (settings.vault / made.file).read_text(encoding="utf-8") == text  # no duplicate
    assert (settings.vault / LEXIQUE).read_bytes() == before  # the note itself untouched


def test_the_model_s_cards_are_used_when_valid_and_the_rules_otherwise(settings: Settings, catalog: Catalog) -> None:
    cards = {
        "cartes": [
            {
                "question": "Quelle hydratation pour le pain au levain ?",
                "reponse": "Environ 70 %.",
                "section": "Étapes",
            },
            {"question": "Comment entretenir le levain ?", "reponse": "Le nourrir :\nfarine et eau à parts égales."},
        ]
    }
    made = make_for_note(settings, catalog, LEVAIN, NOW, replying(json.dumps(cards, ensure_ascii=False)))
    assert made.method == "model" and made.cards[0].question == cards["cartes"][0]["question"]
    text = (settings.vault / made.file).read_text(encoding="utf-8")  # type: ignore[operator]
    assert "Environ 70 %. [[Cuisine/Pain au levain#Étapes|Pain au levain]]" in text
    assert "Comment entretenir le levain ?\n?\nLe nourrir :\nfarine et eau à parts égales.\n[[" in text  # multi-line
    broken = make_for_note(settings, catalog, "Lexique.md", NOW, replying('{"cartes": [{"question": "x"'))
    assert broken.method == "rules" and broken.cards


def test_good_then_again_moves_the_due_date_as_fsrs_says(settings: Settings, catalog: Catalog) -> None:
    from fsrs import Card as FsrsCard
    from fsrs import Rating, Scheduler

    make_for_note(settings, catalog, LEXIQUE, NOW)
    card = catalog.cards(due_before=NOW)[0]
    later = NOW + timedelta(days=3)
    expected, _ = Scheduler().review_card(FsrsCard(due=NOW), Rating.Good, NOW)
    assert grade(catalog, card.id, 3, NOW).due == expected.due
    expected, _ = Scheduler().review_card(expected, Rating.Again, later)
    assert grade(catalog, card.id, 1, later).due == expected.due < later + timedelta(hours=1)  # soon again


def test_fsrs_schedules_each_grade_and_the_last_grade_can_be_undone(settings: Settings, catalog: Catalog) -> None:
    make_for_note(settings, catalog, LEXIQUE, NOW)
    first, second = catalog.cards(due_before=NOW)[:2]
    good = grade(catalog, first.id, 3, NOW)
    again = grade(catalog, second.id, 1, NOW)
    assert good.due > again.due > NOW  # Good waits longer than Again
    assert first.id not in {r.id for r in catalog.cards(due_before=NOW + timedelta(minutes=1))}
    assert catalog.undo_last_grade() == second.id
    assert catalog.card(second.id).due == second.due and catalog.card(first.id).due == good.due  # type: ignore[union-attr]


def test_a_user_s_edit_is_kept_a_deleted_card_retired_a_changed_source_flagged(
    settings: Settings, catalog: Catalog
) -> None:
    made = make_for_note(settings, catalog, LEXIQUE, NOW)
    deck = settings.vault / made.file  # type: ignore[operator]
    lines = deck.read_text(encoding="utf-8").splitlines()
    lambert = next(i for i, line in enumerate(lines) if "« Lambert 93 »" in line)
    gone = next(i for i, line in enumerate(lines) if line.startswith("Que signifie") and i != lambert)
    deleted = parse_cards(lines[gone], LEXIQUE)[0]
    lines[lambert] = "Que signifie « Lambert 93 » ?::la projection officielle (ma version) [[Lexique]]"
    del lines[gone]
    lines.append("\nMa propre question ?::ma réponse")
    deck.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert sync_deck(settings, catalog, NOW) == (1, 1)  # my card in, the deleted one retired
    rows = {r.question: r for r in catalog.cards()}
    assert rows["Que signifie « Lambert 93 » ?"].answer == "la projection officielle (ma version)"
    assert deleted.question not in rows and "Ma propre question ?" in rows
    make_for_note(settings, catalog, LEXIQUE, NOW)  # again: nothing added over my edits
    assert "(ma version)" in deck.read_text(encoding="utf-8")

    economics = next(r for r in catalog.cards() if r.heading == "Économie")
    assert not source_changed(settings, economics)
    note = settings.vault / LEXIQUE
    note.write_text(note.read_text(encoding="utf-8").replace("centième", "millième"), encoding="utf-8")
    assert source_changed(settings, economics) and not source_changed(
        settings, next(r for r in catalog.cards() if r.heading == "Cartographie et données")
    )


def test_the_daily_briefing_says_how_many_cards_are_due(settings: Settings, catalog: Catalog) -> None:
    from services.memory.briefing import gather, render

    assert "Cartes à réviser" not in render(gather(settings, catalog, NOW.date(), NOW), NOW)  # no cards: no section
    make_for_note(settings, catalog, LEXIQUE, NOW)
    briefing = gather(settings, catalog, NOW.date(), NOW)
    assert briefing.cards_due == 12
    assert "## Cartes à réviser\n\n- 12 carte(s) à revoir aujourd'hui" in render(briefing, NOW)


def test_a_definition_with_a_block_id_points_at_its_block(settings: Settings, catalog: Catalog) -> None:
    note = settings.vault / "Tech" / "Glossaire.md"
    note.write_text(
        "# Glossaire\n\n- **RAG** : génération augmentée par la recherche dans des documents ^def-rag\n"
        "- **FSRS** : algorithme de répétition espacée qui prédit l'oubli\n",
        encoding="utf-8",
    )
    made = make_for_note(settings, catalog, "Tech/Glossaire.md", NOW)
    text = (settings.vault / made.file).read_text(encoding="utf-8")  # type: ignore[operator]
    assert "::génération augmentée par la recherche dans des documents [[Tech/Glossaire#^def-rag|Glossaire]]" in text
    rag = next(r for r in catalog.cards() if r.heading == "^def-rag")
    assert not source_changed(settings, rag)
    note.write_text(note.read_text(encoding="utf-8").replace("dans des documents", "dans tes notes"), encoding="utf-8")
    assert source_changed(settings, rag)
