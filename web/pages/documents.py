"""A document's page (``/documents/<path>``): its extracted text page by page, where a citation lands.

PDFs open in the browser's own viewer at their page (``/vault-files/…#page=12``); slides, Office files,
EPUBs and images land here, each page anchored (``#page-3``), low-confidence OCR pages marked.
"""

from __future__ import annotations

from typing import Any

from litestar import Controller
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from litestar.response import Template

from services import vault
from services.attachments.cache import read_extraction
from services.catalog import LinksTable, NotesTable
from services.config import Settings
from services.vault.models import NoteType
from web.page_route import page
from web.pages.notes import ATTACHMENT_TYPES, backlinks


class DocumentsController(Controller):
    path = "/documents"

    @page("/{path:path}", sync_to_thread=True)
    def view(
        self,
        settings: NamedDependency[Settings],
        notes: NamedDependency[NotesTable],
        links: NamedDependency[LinksTable],
        path: FromPath[str],
    ) -> Template:
        rel = path.lstrip("/")
        record = notes.get_note(rel)
        if record is None or record.note_type != NoteType.ATTACHMENT or not vault.may_read(rel, settings.exclude):
            raise NotFoundException()
        context: dict[str, Any] = {
            "active": "notes",
            "record": record,
            "extraction": read_extraction(settings.extraction_cache_path, record.content_hash or ""),
            "served": rel.lower().endswith(ATTACHMENT_TYPES),
            "backlinks": backlinks(notes, links, rel),
        }
        return Template("document.html", context=context)
