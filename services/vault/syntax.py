"""The elements of Obsidian's syntax a note holds: wikilinks and embeds, headings."""

from __future__ import annotations

from pydantic import BaseModel


class WikiLink(BaseModel):
    """One ``[[target#heading|alias]]`` or ``![[embed]]`` occurrence, unresolved."""

    target: str
    heading: str | None = None
    block: str | None = None
    alias: str | None = None
    embed: bool = False


class Heading(BaseModel):
    level: int
    text: str
    line: int
