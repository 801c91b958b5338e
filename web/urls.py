"""The web app's URLs for vault paths: the link builder the Markdown renderer and the templates use."""

from __future__ import annotations

from urllib.parse import quote

from services.vault.addresses import heading_slug

NOTES_PREFIX = "/notes/"
FILES_PREFIX = "/vault-files/"


def note_url(path: str, heading: str | None = None) -> str:
    """``/notes/<path>`` with each segment percent-encoded, plus ``#slug`` for a heading."""
    return f"{NOTES_PREFIX}{quote(path)}" + (f"#{heading_slug(heading)}" if heading else "")


def file_url(path: str) -> str:
    return f"{FILES_PREFIX}{quote(path)}"


class WebUrls:
    """``web.rendering.LinkUrls`` for ObsiRAG's web pages."""

    note = staticmethod(note_url)
    file = staticmethod(file_url)

    @staticmethod
    def is_file(url: str) -> bool:
        return url.startswith(FILES_PREFIX)
