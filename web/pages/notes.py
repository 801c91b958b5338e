"""The note picker (``/notes``), the note viewer (``/notes/<path>``) and the vault's attachments."""

from __future__ import annotations

import mimetypes
from collections import Counter
from itertools import groupby
from typing import Any

from litestar import Controller
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery
from litestar.response import File, Template

from services import vault
from services.catalog import LinksTable, NotesTable
from services.catalog.models import NoteRecord
from services.config import Settings
from services.vault.addresses import obsidian_uri
from services.vault.items import is_item, read_source
from services.vault.models import ParsedNote
from web.note_titles import NoteTitlesCache
from web.page_route import page
from web.rendering import MarkdownRenderer

ATTACHMENT_TYPES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".bmp", ".avif", ".pdf")
PICKER_LIMIT = 500


class NotesController(Controller):
    path = "/notes"

    @page("/", sync_to_thread=True)
    def index(
        self,
        note_titles: NamedDependency[NoteTitlesCache],
        q: FromQuery[str] = "",
        letter: FromQuery[str] = "",
    ) -> Template:
        context = {"active": "notes", "q": q, **_picker(note_titles, q, letter)}
        return Template("notes.html", context=context)

    @page("/list", sync_to_thread=True)
    def picker(
        self,
        note_titles: NamedDependency[NoteTitlesCache],
        q: FromQuery[str] = "",
        letter: FromQuery[str] = "",
    ) -> Template:
        return Template("_note_list.html", context={"q": q, **_picker(note_titles, q, letter)})

    @page("/{path:path}", sync_to_thread=True)
    def view(
        self,
        settings: NamedDependency[Settings],
        notes: NamedDependency[NotesTable],
        links: NamedDependency[LinksTable],
        renderer: NamedDependency[MarkdownRenderer],
        path: FromPath[str],
    ) -> Template:
        note = _read(settings, path.lstrip("/"))
        context: dict[str, Any] = {
            "active": "notes",
            "note": note,
            "html": renderer.render_note(note.markdown, note.path),
            "record": notes.get_note(note.path),
            "backlinks": backlinks(notes, links, note.path),
            "obsidian_uri": None if is_item(note.path) else obsidian_uri(settings.vault.name, note.path),
            "frontmatter": [(k, _show(v)) for k, v in note.frontmatter.items()],
        }
        return Template("note.html", context=context)


class VaultFilesController(Controller):
    """Images and PDFs of the vault, for embeds; never a file outside it, never a dot-folder."""

    path = "/vault-files"

    @page("/{path:path}", sync_to_thread=True)
    def file(self, settings: NamedDependency[Settings], path: FromPath[str]) -> File:
        rel = path.lstrip("/")
        if not rel.lower().endswith(ATTACHMENT_TYPES) or not vault.may_read(rel, settings.exclude):
            raise NotFoundException()
        try:
            absolute = vault.resolve_in_vault(settings.vault, rel)
        except vault.PathOutsideVault:
            raise NotFoundException() from None
        if not absolute.is_file():
            raise NotFoundException()
        media_type = mimetypes.guess_type(absolute.name)[0] or "application/octet-stream"
        headers = {"content-security-policy": "sandbox; default-src 'none'; style-src 'unsafe-inline'"}
        return File(absolute, media_type=media_type, headers=headers, content_disposition_type="inline")


def _read(settings: Settings, rel: str) -> ParsedNote:
    """The note at ``rel``; 404 for anything that is not an indexable note inside the vault."""
    if not vault.is_indexable(rel, settings.exclude):  # what the user excluded is never shown
        raise NotFoundException()
    try:
        return read_source(settings, rel)  # a vault note, or a connected mailbox's message or calendar's event
    except (vault.PathOutsideVault, FileNotFoundError, IsADirectoryError, vault.NoteSkipped):
        raise NotFoundException() from None


def backlinks(notes: NotesTable, links: LinksTable, path: str) -> list[NoteRecord]:
    """The indexed notes linking to ``path`` (a note or a document), each once, by title."""
    sources = dict.fromkeys(link.source for link in links.backlinks(path))
    records = [notes.get_note(source) for source in sources]
    return sorted((r for r in records if r is not None), key=lambda r: r.title.casefold())


def _show(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def _picker(note_titles: NoteTitlesCache, query: str, letter: str = "") -> dict[str, Any]:
    """Notes by title (A–Z, accents ignored), grouped by initial; duplicate titles carry their path.

    The sorted list is cached until the catalog changes; a filter or an initial narrows it, and at most
    ``PICKER_LIMIT`` notes are listed (5,000 links would slow the page more than they help).
    """
    titles = note_titles.get()
    listed = titles.matching(query.strip()) if query.strip() else titles.notes
    if letter:
        listed = [n for n in listed if n.initial == letter]
    shown = listed[:PICKER_LIMIT]
    counts = Counter((n.title or n.path).casefold() for n in shown)
    groups = [
        (first, [(n, counts[(n.title or n.path).casefold()] > 1) for n in members])
        for first, members in groupby(shown, key=lambda n: n.initial)
    ]
    return {"groups": groups, "total": len(listed), "shown": len(shown), "letters": titles.letters, "letter": letter}
