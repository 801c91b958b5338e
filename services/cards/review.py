"""Cards from Markdown to the catalog and back to the user: the deck synced (a new card scheduled now, a card gone
from its file retired), grades scheduled by FSRS (``fsrs``: Again 1, Hard 2, Good 3, Easy 4), the last grade
undone, and a card whose source section changed since it was made flagged « à revoir : la source a changé »."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime

from fsrs import Card as FsrsCard
from fsrs import Rating, Scheduler

from services.cards.deck import Card, add_cards, deck_files, deck_of, parse_cards
from services.cards.make import make_cards
from services.catalog import Catalog
from services.catalog.cards import CardRow, CardsTable
from services.config import Settings
from services.indexing.chunking import split_sections
from services.llm.client import Generator
from services.vault import read_note_if_readable
from services.vault.artifacts import vault_relative

SCHEDULER = Scheduler()


@dataclass
class Made:
    file: str | None  # the note's card file, vault-relative
    cards: list[Card]  # the new ones
    method: str  # "model" or "rules"


def make_for_note(
    settings: Settings, table: CardsTable, path: str, now: datetime, generator: Generator | None = None
) -> Made:
    """New cards for the note at ``path``, appended to its card file and scheduled; ``FileNotFoundError``."""
    note = read_note_if_readable(settings.vault, path, settings.max_file_bytes)
    if note is None:
        raise FileNotFoundError(f"no readable note at {path}")
    deck = deck_of(settings.vault, note.path)
    existing = parse_cards(deck.read_text(encoding="utf-8"), note.path) if deck else []
    language = "en" if note.frontmatter.get("lang") == "en" else _language(note.body)
    cards, method = make_cards(note, language, existing, generator)
    written = add_cards(settings.vault, note.path, note.title, cards, now.date().isoformat())
    sync_deck(settings, table, now)
    return Made(vault_relative(settings.vault, written) if written else None, cards, method)


def sync_deck(settings: Settings, table: CardsTable, now: datetime) -> tuple[int, int]:
    """Every card file read again (the user's edits are what counts): (new cards, cards retired)."""
    kept: set[str] = set()
    known = table.card_ids()
    new = 0
    for path in deck_files(settings.vault):
        relative = vault_relative(settings.vault, path)
        for card in parse_cards(path.read_text(encoding="utf-8"), ""):
            kept.add(card.id)
            fresh = card.id not in known  # a known card keeps its hash and schedule: its note is not read again
            row = CardRow(
                id=card.id, file=relative, source=card.source, heading=card.heading, question=card.question,
                answer=card.answer, source_hash=section_hash(settings, card.source, card.heading) if fresh else "",
                state=json.dumps(FsrsCard(due=now).to_dict()) if fresh else "", due=now,
            )  # fmt: skip
            new += table.upsert_card(row)
    return new, table.retire_cards_except(kept)


def grade(table: CardsTable, card_id: str, rating: int, now: datetime) -> CardRow:
    """Schedule the card after its grade (1–4); the card as it is now."""
    row = table.card(card_id)
    if row is None:
        raise KeyError(f"no card {card_id!r}")
    card, _log = SCHEDULER.review_card(FsrsCard.from_dict(json.loads(row.state)), Rating(rating), now)
    table.grade_card(card_id, rating, json.dumps(card.to_dict()), card.due, now)
    return table.card(card_id)  # type: ignore[return-value]


def tagged(catalog: Catalog, rows: list[CardRow], tag: str) -> list[CardRow]:
    """The cards whose note carries ``tag`` (or one of its sub-tags); all of them without a tag."""
    wanted = tag.strip().lstrip("#").casefold()
    if not wanted:
        return rows
    tags: dict[str, list[str]] = {}
    for row in rows:
        if row.source not in tags:
            record = catalog.get_note(row.source)
            tags[row.source] = [t.casefold() for t in record.tags] if record else []
    return [r for r in rows if any(t == wanted or t.startswith(wanted + "/") for t in tags[r.source])]


def source_changed(settings: Settings, row: CardRow) -> bool:
    """Whether the card's source section reads otherwise than when the card was made."""
    return bool(row.source_hash) and section_hash(settings, row.source, row.heading) != row.source_hash


def section_hash(settings: Settings, source: str, heading: str) -> str:
    """A digest of the source note's section, or block (``^id``), or the whole note without either; "" when the
    note is gone."""
    note = read_note_if_readable(settings.vault, source, settings.max_file_bytes) if source else None
    if note is None:
        return ""
    text = note.body
    if heading.startswith("^"):  # a block: the line that carries its id
        text = next((line for line in note.body.splitlines() if line.rstrip().endswith(heading)), "")
    elif heading:
        found = [s for s in split_sections(note.markdown) if s.heading_path and s.heading_path[-1] == heading]
        text = "\n".join(found[0].lines) if found else ""
    return hashlib.sha1(" ".join(text.split()).encode()).hexdigest()[:16]


def _language(text: str) -> str:
    from services.language.detect import detect_language

    return detect_language(text[:2000])
