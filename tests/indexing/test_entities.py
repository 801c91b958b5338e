"""Entities: normalisation, Markdown to text, span tidying, variant merging, the catalog tables, the chat list."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Span

from services.catalog import Catalog
from services.catalog.models import EntityKind, NoteEntity, NoteRecord
from services.indexing.entities import answer_entities, entity_tag, note_segments, payload_names
from services.indexing.mentions import Mention, merge_mentions, normalize_name, span_mentions

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
PER, ORG, LOC, MISC = EntityKind.PERSON, EntityKind.ORG, EntityKind.PLACE, EntityKind.MISC
STOPS = frozenset({"le", "la", "les", "the", "she", "au", "in"})


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Christine Lagarde", "christine lagarde"),
        ("  Jean-Claude   Trichet ", "jean claude trichet"),
        ("Banco de España", "banco de espana"),
        ("Banca d’Italia", "banca d'italia"),
        ("ÉTATS-UNIS", "etats unis"),
    ],
)
def test_normalize_name_folds_case_accents_and_punctuation(name: str, expected: str) -> None:
    assert normalize_name(name) == expected


def test_note_segments_keep_prose_and_drop_markup() -> None:
    body = (
        "# Les présidents\n\n- [ ] Voir **Christine Lagarde** et [[Personnes/Claire Dubois|Claire]] #todo\n"
        "```python\nMario = 'Draghi'\n```\n| Ville | Pays |\n| Rome | Italie |\n> [!note] Vu à [Paris](https://x.fr)\n"
    )
    segments = note_segments(body)
    assert "Les présidents" in segments
    assert "Voir Christine Lagarde et Claire" in segments
    assert {"Rome", "Italie", "Vu à Paris"} <= set(segments)
    assert not any("Draghi" in s or "#todo" in s or "https" in s for s in segments)


def _span(text: str, start: int, end: int, label: str) -> Span:
    doc = spacy.blank("fr")(text)
    return Span(doc, start, end, label=label)


def test_span_mentions_trim_articles_and_split_at_lowercase_in_strict_mode() -> None:
    [havre] = span_mentions(_span("Elle a grandi au Havre .", 3, 5, "LOC"), STOPS, strict=False)
    assert (havre.text, havre.kind) == ("Havre", LOC)
    lenient = span_mentions(_span("La Banque centrale européenne décide", 0, 4, "ORG"), STOPS, strict=False)
    assert [m.text for m in lenient] == ["Banque centrale européenne"]
    strict = span_mentions(_span("Lord Byron and Annabella Milbanke met", 0, 5, "PER"), STOPS, strict=True)
    assert [m.text for m in strict] == ["Lord Byron", "Annabella Milbanke"]
    assert span_mentions(_span("She said", 0, 1, "PER"), STOPS, strict=True) == []
    assert span_mentions(_span("En 2020 il pleut", 1, 2, "DATE"), STOPS, strict=False) == []


def test_merge_counts_and_merges_obvious_variants() -> None:
    mentions = [
        Mention("Christine Lagarde", PER, False),
        Mention("Lagarde", LOC, False),
        Mention("Lagarde", PER, False),
        Mention("Banque centrale européenne", ORG, False),
        *[Mention("BCE", ORG, False)] * 3,
        Mention("Francfort", LOC, False),
        Mention("Francfort-sur-le-Main", LOC, False),
    ]
    entities = {e.normalized: e for e in merge_mentions(mentions, "texte sans ces noms")}
    assert set(entities) == {"christine lagarde", "banque centrale europeenne", "francfort sur le main"}
    lagarde = entities["christine lagarde"]
    assert (lagarde.name, lagarde.kind, lagarde.count, lagarde.variants) == ("Christine Lagarde", PER, 3, ["Lagarde"])
    assert entities["banque centrale europeenne"].count == 4
    assert entities["banque centrale europeenne"].variants == ["BCE"]


def test_merge_drops_common_nouns_and_sentence_openers_and_keeps_ambiguous_names_apart() -> None:
    mentions = [
        Mention("Inflation", MISC, True),
        Mention("Historians", PER, True),
        Mention("Lord Byron", PER, False),
        Mention("Augusta Ada Byron", PER, False),
        Mention("Byron", PER, False),
        Mention("Silicon Valley Bank", LOC, False),
    ]
    entities = {e.normalized: e for e in merge_mentions(mentions, "l'inflation monte")}
    assert "inflation" not in entities and "historians" not in entities
    assert "byron" in entities  # Lord Byron or Augusta Ada Byron: not merged
    assert entities["silicon valley bank"].kind == ORG  # a bank is an organisation whatever the label


def test_tags_and_payload_names() -> None:
    lagarde = NoteEntity(name="Christine Lagarde", normalized="christine lagarde", kind=PER, variants=["Lagarde"])
    bce = NoteEntity(name="Banque d'Italie", normalized="banque d'italie", kind=ORG)
    engine = NoteEntity(name="Analytical Engine", normalized="analytical engine", kind=MISC)
    assert entity_tag(lagarde) == "personne/christine-lagarde"
    assert entity_tag(bce) == "org/banque-d-italie"
    assert entity_tag(engine) is None
    assert payload_names([lagarde, bce]) == ["christine lagarde", "lagarde", "banque d'italie"]


# --- catalog ----------------------------------------------------------------------------------------


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    cat = Catalog(tmp_path / "catalog.sqlite3")
    for path in ("a.md", "b.md", "c.md"):
        cat.upsert_note(NoteRecord(path=path, title=path[0].upper(), content_hash=f"h-{path}"))
    yield cat
    cat.close()


def _entity(name: str, kind: EntityKind, count: int = 1) -> NoteEntity:
    return NoteEntity(name=name, normalized=normalize_name(name), kind=kind, count=count)


def test_catalog_stores_entities_per_note_and_follows_the_note(catalog: Catalog) -> None:
    lagarde, bce = _entity("Christine Lagarde", PER, 6), _entity("BCE", ORG, 2)
    assert catalog.replace_entities("a.md", [bce, lagarde], "h-a.md", "fr", "fr_core_news_sm", NOW)
    assert catalog.replace_entities("b.md", [lagarde], "h-b.md", "fr", "fr_core_news_sm", NOW)
    assert not catalog.replace_entities("gone.md", [lagarde], "h", "fr", "m", NOW)
    assert [e.name for e in catalog.note_entities("a.md")] == ["Christine Lagarde", "BCE"]
    assert catalog.notes_with_entity("christine lagarde") == ["a.md", "b.md"]
    assert catalog.entity_state("a.md") == ("h-a.md", "fr_core_news_sm")
    assert [(s.name, s.notes, s.mentions) for s in catalog.top_entities(limit=1)] == [("Christine Lagarde", 2, 12)]
    assert catalog.notes_without_entities("fr_core_news_sm") == ["c.md"]
    assert catalog.notes_without_entities("other") == ["a.md", "b.md", "c.md"]

    catalog.move_note("a.md", "moved.md")
    assert catalog.notes_with_entity("christine lagarde") == ["b.md", "moved.md"]
    catalog.delete_note("b.md")
    assert catalog.notes_with_entity("christine lagarde") == ["moved.md"]
    assert catalog.entity_state("b.md") is None


def test_answer_entities_lists_related_notes(catalog: Catalog) -> None:
    lagarde, paris = _entity("Christine Lagarde", PER, 3), _entity("Paris", LOC)
    catalog.replace_entities("a.md", [lagarde, paris, _entity("Engine", MISC)], "h", "fr", "m", NOW)
    catalog.replace_entities("b.md", [lagarde], "h", "fr", "m", NOW)
    catalog.replace_entities("c.md", [lagarde, paris], "h", "fr", "m", NOW)
    found = answer_entities(catalog, ["a.md"], limit=10, related=1)
    assert [(e.name, e.tag) for e in found] == [
        ("Christine Lagarde", "personne/christine-lagarde"),
        ("Paris", "lieu/paris"),
    ]
    assert [(s.path, s.title) for s in found[0].notes] == [("b.md", "B")]
    assert answer_entities(catalog, ["a.md", "c.md"], limit=1)[0].notes[0].path == "b.md"
