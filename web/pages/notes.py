"""The note picker (``/notes``), the note viewer (``/notes/<path>``) and the vault's attachments."""

from __future__ import annotations

import mimetypes
from collections import Counter
from itertools import groupby
from typing import Any

from litestar import Controller
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery
from litestar.response import File, Template

from services import vault
from services.catalog.models import NoteRecord
from services.language.fold import fold
from services.vault.addresses import obsidian_uri
from services.vault.models import ParsedNote
from web.page_route import page
from web.site import Site, SiteDep

ATTACHMENT_TYPES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".bmp", ".avif", ".pdf")
PICKER_LIMIT = 500


class NotesController(Controller):
    path = "/notes"

    @page("/", sync_to_thread=True)
    def index(self, site: SiteDep, q: FromQuery[str] = "", letter: FromQuery[str] = "") -> Template:
        return Template("notes.html", context={"active": "notes", "q": q, **_picker(site, q, letter)})

    @page("/list", sync_to_thread=True)
    def picker(self, site: SiteDep, q: FromQuery[str] = "", letter: FromQuery[str] = "") -> Template:
        return Template("_note_list.html", context={"q": q, **_picker(site, q, letter)})

    @page("/{path:path}", sync_to_thread=True)
    def view(self, site: SiteDep, path: FromPath[str]) -> Template:
        rel = path.lstrip("/")
        note = _read(site, rel)
        renderer = site.renderer()
        context: dict[str, Any] = {
            "active": "notes",
            "note": note,
            "html": renderer.render_note(note.markdown, note.path),
            "record": site.catalog.get_note(note.path),
            "backlinks": _backlinks(site, note.path),
            "obsidian_uri": obsidian_uri(site.settings.vault.name, note.path),
            "frontmatter": [(k, _show(v)) for k, v in note.frontmatter.items()],
        }
        return Template("note.html", context=context)


class VaultFilesController(Controller):
    """Images and PDFs of the vault, for embeds; never a file outside it, never a dot-folder."""

    path = "/vault-files"

    @page("/{path:path}", sync_to_thread=True)
    def file(self, site: SiteDep, path: FromPath[str]) -> File:
        rel = path.lstrip("/")
        if not rel.lower().endswith(ATTACHMENT_TYPES) or any(p.startswith(".") for p in rel.split("/")):
            raise NotFoundException()
        try:
            absolute = vault.resolve_in_vault(site.settings.vault, rel)
        except vault.PathOutsideVault:
            raise NotFoundException() from None
        if not absolute.is_file():
            raise NotFoundException()
        media_type = mimetypes.guess_type(absolute.name)[0] or "application/octet-stream"
        headers = {"content-security-policy": "sandbox; default-src 'none'; style-src 'unsafe-inline'"}
        return File(absolute, media_type=media_type, headers=headers, content_disposition_type="inline")


def _read(site: Site, rel: str) -> ParsedNote:
    """The note at ``rel``; 404 for anything that is not an indexable note inside the vault."""
    if not vault.is_indexable(rel, []):
        raise NotFoundException()
    try:
        return vault.read_note(site.settings.vault, rel, site.settings.max_file_bytes)
    except (vault.PathOutsideVault, FileNotFoundError, IsADirectoryError, vault.NoteSkipped):
        raise NotFoundException() from None


def _backlinks(site: Site, path: str) -> list[NoteRecord]:
    sources = dict.fromkeys(link.source for link in site.catalog.backlinks(path))
    records = [site.catalog.get_note(source) for source in sources]
    return sorted((r for r in records if r is not None), key=lambda r: r.title.casefold())


def _show(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def _picker(site: Site, query: str, letter: str = "") -> dict[str, Any]:
    """Notes by title (A–Z, accents ignored), grouped by initial; duplicate titles carry their path.

    The sorted list is cached until the catalog changes; a filter or an initial narrows it, and at most
    ``PICKER_LIMIT`` notes are listed (5,000 links would slow the page more than they help).
    """
    notes = site.cached("note-picker", lambda: _sorted_notes(site))
    if query.strip():
        wanted = {n.path for n in site.catalog.list_notes(query=query.strip())}
        notes = [n for n in notes if n.path in wanted]
    if letter:
        notes = [n for n in notes if _initial(n.title or n.path) == letter]
    shown = notes[:PICKER_LIMIT]
    counts = Counter((n.title or n.path).casefold() for n in shown)
    groups = [
        (initial, [(n, counts[(n.title or n.path).casefold()] > 1) for n in members])
        for initial, members in groupby(shown, key=lambda n: _initial(n.title or n.path))
    ]
    letters = site.cached("note-letters", lambda: sorted({_initial(n.title or n.path) for n in _sorted_notes(site)}))
    return {"groups": groups, "total": len(notes), "shown": len(shown), "letters": letters, "letter": letter}


def _sorted_notes(site: Site) -> list[NoteRecord]:
    notes = site.catalog.list_notes()
    notes.sort(key=lambda n: (_sort_key(n.title or n.path), n.path))
    return notes


def _sort_key(title: str) -> str:
    return fold(title)


def _initial(title: str) -> str:
    first = _sort_key(title)[:1].upper()
    return first if first.isalpha() else "#"
