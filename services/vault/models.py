"""What ObsiRAG reads from one vault file."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr

from services.vault.reader import MarkdownDoc, read_markdown
from services.vault.syntax import Heading, WikiLink


class NoteType(StrEnum):
    NOTE = "note"
    INSIGHT = "insight"
    SYNAPSE = "synapse"
    SYNTHESIS = "synthesis"
    CONVERSATION = "conversation"
    BRIEFING = "briefing"  # obsirag/briefings/YYYY-MM-DD.md
    RESEARCH = "research"  # obsirag/research/YYYY-MM/…: a research answer saved with its trail
    PROFILE = "profile"  # obsirag/assistant/Profil.md and Rappels.md, the memory's mirrors
    ATTACHMENT = "attachment"  # a PDF, an Office file, an EPUB or an image: its extracted pages
    MAIL = "mail"  # a message read from a connected mailbox (``mail:…`` paths, never in the vault)
    EVENT = "event"  # a calendar event read from a connected calendar (``event:…`` paths)


class ParsedNote(BaseModel):
    """Everything ObsiRAG reads from one Markdown file. ``path`` is vault-relative, POSIX style."""

    path: str
    title: str
    aliases: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    links: list[WikiLink] = Field(default_factory=list)
    headings: list[Heading] = Field(default_factory=list)
    frontmatter: dict[str, Any] = Field(default_factory=dict)
    frontmatter_error: str | None = None
    body: str = ""
    created: datetime
    modified: datetime
    note_type: NoteType = NoteType.NOTE
    content_hash: str
    size: int
    mtime: float
    encoding: str = "utf-8"
    _markdown: Any = PrivateAttr(default=None)

    @property
    def folder(self) -> str:
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""

    @property
    def markdown(self) -> MarkdownDoc:
        """The body parsed once by ``services.vault.reader`` (``read_note`` hands its parse over)."""
        if self._markdown is None or self._markdown.body != self.body:
            self._markdown = read_markdown(self.body)
        return self._markdown
