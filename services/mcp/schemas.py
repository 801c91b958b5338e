"""What the MCP tools return: compact, citeable results (vault-relative path, title, heading, URI)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class NoteRef(BaseModel):
    """A note one can cite: its vault-relative path, title and ``obsidian://`` URI."""

    path: str
    title: str
    uri: str = Field(description="obsidian://open?vault=…&file=… (opens the note in Obsidian)")


class SearchHit(NoteRef):
    heading: str = Field("", description="heading path of the best chunk (`A > B`), empty at the top")
    score: float
    snippet: str
    page: int | None = Field(None, description="a document's page (PDF page, slide, chapter) holding the passage")


class SearchResults(BaseModel):
    query: str
    since: datetime | None = Field(None, description="date range read from the query or given, when any")
    until: datetime | None = None
    results: list[SearchHit]


class Link(BaseModel):
    target: str = Field(description="the link as written ([[target]])")
    path: str | None = Field(None, description="the vault file it resolves to; null when dangling")
    heading: str | None = None


class NoteView(NoteRef):
    heading: str | None = Field(None, description="the section returned, when one was asked for")
    frontmatter: dict[str, Any]
    tags: list[str]
    type: str
    created: datetime | None = None
    modified: datetime | None = None
    headings: list[str]
    body: str = Field(description="the Markdown body, or only the asked section")
    links: list[Link] = Field(description="outgoing wikilinks and embeds, in order")
    backlinks: list[NoteRef] = Field(description="notes that link here")


class ListedNote(NoteRef):
    folder: str
    tags: list[str]
    type: str
    created: datetime | None = None
    modified: datetime | None = None


class NotePage(BaseModel):
    total: int = Field(description="notes matching the filters")
    notes: list[ListedNote]
    next_cursor: str | None = Field(None, description="pass it as `cursor` for the next page; null at the end")


class SimilarNote(NoteRef):
    similarity: float = Field(description="cosine of the two notes' mean chunk vectors")
    linked: bool = Field(description="a wikilink joins the two notes (either way); unlinked close pairs make synapses")


class Neighbor(NoteRef):
    depth: int = Field(description="1: linked to the note; 2: linked to a neighbour")
    relation: str = Field(description="`link` (a wikilink, either way) or `synapse` (a learner's synapse note)")
    via: str | None = Field(None, description="at depth 2, the neighbour it is reached through")


class Neighbors(BaseModel):
    note: NoteRef
    neighbors: list[Neighbor]


class EntityNotes(BaseModel):
    name: str
    kind: str
    notes_count: int
    mentions: int
    notes: list[NoteRef]


class Source(NoteRef):
    n: int = Field(description="the [n] the answer cites")
    heading: str = ""
    primary: bool = Field(False, description="the main note of the answer")
    url: str | None = Field(None, description="a web page's address (web answers only)")
    page: int | None = Field(None, description="a document's page the excerpt came from (attachments only)")


class Clip(BaseModel):
    """A web page clipped into the vault (``clip``)."""

    path: str = Field(description="the clip's vault path (obsirag/clips/YYYY-MM/…), readable with read_note")
    title: str
    updated: bool = Field(description="the URL had a clip already: it was updated, not duplicated")
    images: int = Field(description="images downloaded beside the clip")
    failed_images: list[str] = Field(default_factory=list, description="image URLs kept as links (not downloaded)")
    indexed: bool = Field(description="searchable now (false: the system indexes it when it runs)")


class Flashcard(BaseModel):
    question: str
    answer: str
    heading: str = Field("", description="the section of the note it comes from")


class Flashcards(BaseModel):
    """Study cards made from a note (``make_cards``)."""

    file: str | None = Field(description="the note's card file under obsirag/cards/ (Spaced Repetition format)")
    method: str = Field(description="model (the model wrote them) or rules (definitions and sections)")
    cards: list[Flashcard] = Field(description="the cards added now (none: the note's deck had them all)")


class Answer(BaseModel):
    answer: str
    refused: bool = Field(description="true when the vault does not hold the answer (nothing invented)")
    provenance: str = Field(description="vault, web, vault+web or none")
    sources: list[Source]
    main_note: str | None = None
    thread_id: str = Field(description="pass it back as `thread_id` for a follow-up question")
    truncated: bool = Field(False, description="the answer stopped at the length cap")
    kind: str | None = Field(
        None,
        description="quoted, written, closest (not sure: the closest passages, none given as the answer), refused…",
    )
    confidence: float | None = Field(None, description="0–1: how likely the answer's note is the right one")
    steps: list[str] = Field(
        default_factory=list, description="research mode: each step (sub-question searched, notes found), in order"
    )


class RememberedFact(BaseModel):
    """One confirmed fact of the assistant's memory, with where it came from."""

    id: int
    subject: str
    predicate: str
    value: str
    kind: str = Field(description="preference, decision, entity, event, habit, goal or open_loop")
    confidence: float
    source: str = Field(description="consolidation (from notes and chats), user (edited by hand) or chat")
    source_ref: str = Field(description="the vault note, chat thread or Profil.md it comes from")
    updated: datetime


class Change(NoteRef):
    folder: str
    type: str
    modified: datetime | None = None
