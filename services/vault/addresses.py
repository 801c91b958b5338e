"""How a note and its headings are addressed: heading anchors, a section's text, Obsidian URIs."""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote

from services.vault import reader
from services.vault.reader import MarkdownDoc


def heading_slug(text: str) -> str:
    """The anchor id of a heading (``"Durée et planning"`` → ``durée-et-planning``); stable across pages.

    Not ``services.language.fold.fold``: an anchor keeps the heading's accents, as the browser shows it."""
    text = unicodedata.normalize("NFC", text).strip().casefold()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"[\s-]+", "-", text).strip("-") or "section"


def section(body: str | MarkdownDoc, heading: str) -> str:
    """The lines under ``heading`` (matched case-insensitively, or by slug) up to the next heading as high."""
    wanted = heading_slug(heading)
    doc = reader.read_markdown(body) if isinstance(body, str) else body
    lines, headings = doc.lines, doc.headings
    for i, found in enumerate(headings):
        if heading_slug(found.text) != wanted:
            continue
        end = next((h.line for h in headings[i + 1 :] if h.level <= found.level), len(lines))
        return "\n".join(lines[found.line + 1 : end])
    return doc.body


def obsidian_uri(vault_name: str, path: str) -> str:
    """``obsidian://open?vault=…&file=…``: opens the note in the Obsidian app."""
    return f"obsidian://open?vault={quote(vault_name, safe='')}&file={quote(path.removesuffix('.md'), safe='')}"
