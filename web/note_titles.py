"""The note picker's titles: every note sorted by title (accents and case ignored), and the initials they
start with; built from the catalog and kept until it changes (``NoteTitlesCache``), then rebuilt from the
last list: only the rows that changed are folded and placed again."""

from __future__ import annotations

import threading
from bisect import insort
from dataclasses import dataclass, field

from services.catalog import NotesTable
from services.catalog.models import NoteStatus
from services.language.fold import fold
from services.vault.items import is_item

Row = tuple[str, str | None, NoteStatus]  # a catalog row as the picker reads it: path, title, status
PLACE_AT_MOST = 2_000  # changed notes placed one by one into the last list; past this, the whole list is sorted


@dataclass(frozen=True, slots=True)
class PickerNote:
    """What the picker shows of a note and finds it by. Not its whole record: reading 55,000 of those took
    1.3 s, and filtering them through SQL (``fold`` called on every path and title) 0.7–1.1 s a keystroke."""

    path: str
    title: str | None
    status: NoteStatus
    initial: str  # ``initial`` of its title (or path): the heading it is listed under
    folded: tuple[str, str]  # its path and title folded (``fold``): what a filter looks for

    @property
    def order(self) -> tuple[str, str]:
        """Its place in the list: the folded title (or path, for a note without one), then the path."""
        return self.folded[1] or self.folded[0], self.path


@dataclass(frozen=True)
class NoteTitles:
    notes: list[PickerNote]  # by ``order``: title A–Z (accents ignored), then path
    letters: list[str]  # the initials present (``initial``), sorted
    rows: dict[Row, PickerNote | None] = field(default_factory=dict, repr=False, compare=False)  # None: an item

    def matching(self, query: str) -> list[PickerNote]:
        """The notes whose path or title holds ``query``, case and accents ignored (``list_notes``' rule)."""
        needle = fold(query)
        return [n for n in self.notes if needle in n.folded[0] or needle in n.folded[1]]


def initial(folded: str) -> str:
    """A folded title's first letter, upper case (accents are gone: ``fold``); ``#`` for a digit or a sign."""
    first = folded[:1].upper()
    return first if first.isalpha() else "#"


def note_titles(notes: NotesTable, last: NoteTitles | None = None) -> NoteTitles:
    """The list from the catalog's rows; the notes of ``last`` whose row is unchanged are kept as they are
    and where they were (at 55,000 notes, folding and sorting them all again took ~1 s, #34)."""
    known = last.rows if last is not None else {}
    rows: dict[Row, PickerNote | None] = {}
    fresh: list[PickerNote] = []
    folders: dict[str, str] = {}  # each folder folded once: a vault's notes share few of them
    for row in notes.title_rows():
        note = known[row] if row in known else _picker_note(row, folders)
        rows[row] = note
        if note is not None and row not in known:
            fresh.append(note)
    if last is None or len(fresh) > PLACE_AT_MOST:
        listed = sorted((note for note in rows.values() if note is not None), key=lambda note: note.order)
    else:
        listed = _still_listed(last.notes, rows, len(fresh))
        for note in fresh:
            insort(listed, note, key=lambda note: note.order)
    return NoteTitles(listed, sorted({note.initial for note in listed}), rows)


def _still_listed(notes: list[PickerNote], rows: dict[Row, PickerNote | None], fresh: int) -> list[PickerNote]:
    """``notes`` less those whose row is gone (removed, renamed, retitled): a copy of them all when the rows
    hold as many notes besides the ``fresh`` ones (a note saved again keeps its row: the usual case)."""
    if sum(note is not None for note in rows.values()) - fresh == len(notes):
        return list(notes)
    alive = {id(note) for note in rows.values()}
    return [note for note in notes if id(note) in alive]


def _picker_note(row: Row, folders: dict[str, str]) -> PickerNote | None:
    """The note of a catalog row; None for a mail or an event (no note to pick)."""
    path, title, status = row
    if is_item(path):
        return None
    folder, _, name = path.rpartition("/")
    if folder not in folders:
        folders[folder] = fold(folder)
    folded_path = f"{folders[folder]}/{fold(name)}" if folder else fold(name)  # fold works letter by letter
    folded_title = fold(title) if title else ""
    return PickerNote(path, title, status, initial(folded_title or folded_path), (folded_path, folded_title))


class NoteTitlesCache:
    """``NoteTitles``, rebuilt from the last one when the catalog's fingerprint changes (a note indexed,
    removed, re-linked)."""

    def __init__(self, notes: NotesTable) -> None:
        self._notes = notes
        self._built: tuple[tuple[object, ...], NoteTitles] | None = None  # one attribute: swapped atomically
        self._building = threading.Lock()  # a view during the web's warm-up waits for its list, not builds one

    def get(self) -> NoteTitles:
        built = self._built
        if built is not None and built[0] == self._notes.fingerprint():
            return built[1]
        with self._building:
            fingerprint, built = self._notes.fingerprint(), self._built
            if built is None or built[0] != fingerprint:
                built = self._built = (fingerprint, note_titles(self._notes, built[1] if built else None))
            return built[1]
