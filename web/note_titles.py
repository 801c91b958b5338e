"""The note picker's titles: every note sorted by title (accents and case ignored), and the initials they
start with; built from the catalog and kept until it changes (``NoteTitlesCache``)."""

from __future__ import annotations

from dataclasses import dataclass

from services.catalog import NotesTable
from services.catalog.models import NoteRecord
from services.language.fold import fold
from services.vault.items import is_item


@dataclass(frozen=True)
class NoteTitles:
    notes: list[NoteRecord]  # by title A–Z (accents ignored), then path
    letters: list[str]  # the initials present (``initial``), sorted


def initial(title: str) -> str:
    """A title's first letter without its accent, upper case; ``#`` for a digit or a sign."""
    first = fold(title)[:1].upper()
    return first if first.isalpha() else "#"


def note_titles(notes: NotesTable) -> NoteTitles:
    records = [n for n in notes.list_notes() if not is_item(n.path)]  # mail and events are no notes to pick
    records.sort(key=lambda n: (fold(n.title or n.path), n.path))
    return NoteTitles(records, sorted({initial(n.title or n.path) for n in records}))


class NoteTitlesCache:
    """``NoteTitles``, rebuilt when the catalog's fingerprint changes (a note indexed, removed, re-linked)."""

    def __init__(self, notes: NotesTable) -> None:
        self._notes = notes
        self._built: tuple[tuple[object, ...], NoteTitles] | None = None  # one attribute: swapped atomically

    def get(self) -> NoteTitles:
        fingerprint = self._notes.fingerprint()
        if self._built is None or self._built[0] != fingerprint:
            self._built = (fingerprint, note_titles(self._notes))
        return self._built[1]
