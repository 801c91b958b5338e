"""The note picker's titles: every note sorted by title (accents and case ignored), and the initials they
start with; built from the catalog and kept until it changes (``NoteTitlesCache``)."""

from __future__ import annotations

from dataclasses import dataclass

from services.catalog import NotesTable
from services.catalog.models import NoteStatus
from services.language.fold import fold
from services.vault.items import is_item


@dataclass(frozen=True, slots=True)
class PickerNote:
    """What the picker shows of a note and finds it by. Not its whole record: reading 55,000 of those took
    1.3 s, and filtering them through SQL (``fold`` called on every path and title) 0.7–1.1 s a keystroke."""

    path: str
    title: str | None
    status: NoteStatus
    initial: str  # ``initial`` of its title (or path): the heading it is listed under
    folded: tuple[str, str]  # its path and title folded (``fold``): what a filter looks for


@dataclass(frozen=True)
class NoteTitles:
    notes: list[PickerNote]  # by title A–Z (accents ignored), then path
    letters: list[str]  # the initials present (``initial``), sorted

    def matching(self, query: str) -> list[PickerNote]:
        """The notes whose path or title holds ``query``, case and accents ignored (``list_notes``' rule)."""
        needle = fold(query)
        return [n for n in self.notes if needle in n.folded[0] or needle in n.folded[1]]


def initial(folded: str) -> str:
    """A folded title's first letter, upper case (accents are gone: ``fold``); ``#`` for a digit or a sign."""
    first = folded[:1].upper()
    return first if first.isalpha() else "#"


def note_titles(notes: NotesTable) -> NoteTitles:
    listed: list[tuple[str, PickerNote]] = []
    folders: dict[str, str] = {}  # each folder folded once: a vault's notes share few of them
    for path, title, status in notes.title_rows():
        if is_item(path):  # mail and events are no notes to pick
            continue
        folder, _, name = path.rpartition("/")
        if folder not in folders:
            folders[folder] = fold(folder)
        folded_path = f"{folders[folder]}/{fold(name)}" if folder else fold(name)  # fold works letter by letter
        folded_title = fold(title) if title else ""
        shown = folded_title or folded_path
        listed.append((shown, PickerNote(path, title, status, initial(shown), (folded_path, folded_title))))
    listed.sort(key=lambda entry: (entry[0], entry[1].path))
    records = [note for _, note in listed]
    return NoteTitles(records, sorted({note.initial for note in records}))


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
