"""The web app's URLs for vault paths: the link builder the Markdown renderer and the templates use."""

from __future__ import annotations

from urllib.parse import quote

from services.vault.addresses import heading_slug

NOTES_PREFIX = "/notes/"
FILES_PREFIX = "/vault-files/"
DOCUMENTS_PREFIX = "/documents/"


def note_url(path: str, heading: str | None = None) -> str:
    """``/notes/<path>`` with each segment percent-encoded, plus ``#slug`` for a heading."""
    return f"{NOTES_PREFIX}{quote(path)}" + (f"#{heading_slug(heading)}" if heading else "")


def file_url(path: str) -> str:
    return f"{FILES_PREFIX}{quote(path)}"


def source_url(path: str, heading: str | None = None, page: int | None = None) -> str:
    """Where a cited source opens: a note at its heading, a PDF in the browser's own viewer at its page
    (``#page=12``), any other document on its page of extracted text (``/documents/…#page-3``)."""
    if path.lower().endswith(".md"):
        return note_url(path, heading)
    if path.lower().endswith(".pdf"):
        return file_url(path) + (f"#page={page}" if page is not None else "")
    return f"{DOCUMENTS_PREFIX}{quote(path)}" + (f"#page-{page}" if page is not None else "")


class WebUrls:
    """``web.rendering.LinkUrls`` for ObsiRAG's web pages."""

    note = staticmethod(note_url)
    file = staticmethod(file_url)
    source = staticmethod(source_url)

    @staticmethod
    def is_file(url: str) -> bool:
        return url.startswith(FILES_PREFIX)
