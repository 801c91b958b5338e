"""The records the catalog keeps: notes and their status, links, index runs, entities, the learner's
progress, conversations (threads, turns, their sources)."""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from services.catalog.research_models import SubQuestion
from services.vault.models import NoteType
from services.vault.syntax import WikiLink

CITATION = re.compile(r"\[\d+\]")


class NoteStatus(StrEnum):
    INDEXED = "indexed"
    SKIPPED = "skipped"
    ERROR = "error"


class NoteRecord(BaseModel):
    """A catalog row: the state of one vault file."""

    path: str
    content_hash: str = ""
    mtime: float = 0.0
    size: int = 0
    title: str = ""
    aliases: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    note_type: NoteType = NoteType.NOTE
    created: datetime | None = None
    modified: datetime | None = None
    status: NoteStatus = NoteStatus.INDEXED
    message: str | None = None
    chunk_count: int = 0
    indexed_at: datetime | None = None

    @property
    def folder(self) -> str:
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""


class ResolvedLink(WikiLink):
    """A catalog link row: one ``WikiLink`` of ``source`` at ``position``, with the file it resolves to."""

    source: str
    position: int
    target_path: str | None = None  # None while dangling


class FolderCoverage(BaseModel):
    """How many notes of one folder (``""`` is the vault root) are in each ``NoteStatus``."""

    folder: str
    indexed: int = 0
    skipped: int = 0
    error: int = 0

    @property
    def total(self) -> int:
        return self.indexed + self.skipped + self.error


class IndexRun(BaseModel):
    """One indexing run (a reconcile, a watcher batch, a rebuild) and its named counters."""

    id: int
    kind: str
    started_at: datetime
    finished_at: datetime | None = None
    error: str | None = None
    counters: dict[str, int] = Field(default_factory=dict)

    @property
    def running(self) -> bool:
        return self.finished_at is None


class Provenance(StrEnum):
    VAULT = "vault"
    WEB = "web"
    BOTH = "vault+web"
    NONE = "none"  # nothing found anywhere: the honest "not in your vault"


class AnswerKind(StrEnum):
    """What an answer is: quoted from the notes (no model), written by the model, a refusal, a list of notes,
    a memory or reminder reply, or a failure (``obsirag ask --json``'s ``kind``)."""

    QUOTED = "quoted"
    WRITTEN = "written"
    REFUSED = "refused"
    CLOSEST = "closest"  # « pas sûr »: the closest notes' passages, none given as the answer
    LISTING = "listing"
    MEMORY = "memory"
    FAILED = "failed"

    @property
    def evidence(self) -> bool:
        """Whether a saved conversation's turn of this kind may be read as evidence (the assistant's own
        confirmations, refusals and failures never are)."""
        return self in (AnswerKind.QUOTED, AnswerKind.WRITTEN, AnswerKind.LISTING)


class Source(BaseModel):
    """One cited source of an answer: a vault note (``path``) or a web page (``url``)."""

    n: int
    title: str
    path: str | None = None
    url: str | None = None
    heading: str = ""
    primary: bool = False
    passage: str = ""  # listing questions: the passage that makes the note relevant
    page: int | None = None  # an attachment's page (PDF page, slide, chapter) the excerpt came from
    screenshot: bool = False  # the excerpt is an image's OCR text (a screenshot, a photo): cited as such

    @property
    def kind(self) -> str:
        return "web" if self.url else "vault"

    @property
    def label(self) -> str:
        """The citation's name as the (French) web UI shows it: ``label_in("fr")``."""
        return self.label_in("fr")

    def label_in(self, language: str) -> str:
        """« Manuel.pdf, p. 12 » for a document's page, « capture d'écran : Réglages.png » (« screenshot:
        … » in English) for an image's OCR text (one page: no page number), else the title."""
        if self.screenshot:
            return SCREENSHOT_LABEL.get(language, SCREENSHOT_LABEL["fr"]) + self.title
        return f"{self.title}, p. {self.page}" if self.page is not None else self.title


SCREENSHOT_LABEL = {"fr": "capture d'écran : ", "en": "screenshot: "}


class MemoryUse(BaseModel):
    """A remembered fact an answer's prompt held, as shown under the answer ("mémoire utilisée")."""

    id: int
    text: str


class AnswerMarks:
    """What an answer's text and end say about it, for a stored turn and a live answer alike."""

    if TYPE_CHECKING:  # the models' own fields (declared here, pydantic would take them as fields)
        answer: str
        finish_reason: str | None

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"

    @property
    def cited(self) -> bool:
        """Whether the answer cites an excerpt ``[n]``: a vault answer without one is not grounded."""
        return bool(CITATION.search(self.answer))


class Turn(AnswerMarks, BaseModel):
    id: int | None = None
    thread_id: str
    question: str
    retrieval_query: str = ""
    answer: str
    sources: list[Source] = Field(default_factory=list)
    provenance: Provenance
    main_note: str | None = None
    model: str | None = None
    backend: str | None = None
    timings: dict[str, float] = Field(default_factory=dict)
    created_at: datetime
    prompt: str = ""  # the user message sent to the model (excerpts + question); "" without a model call
    web: Literal["", "failed", "empty"] = ""  # the web search was asked for and failed / found nothing
    error: str = ""  # the question failed: what the user was told (the answer is then empty or partial)
    finish_reason: str | None = None  # "length": the answer stopped at the token cap
    memory: list[MemoryUse] = Field(default_factory=list)  # remembered facts its prompt held
    kind: AnswerKind | None = None  # None: a turn from before kinds were recorded
    grounding: dict[str, Any] | None = None  # the chat's decision and why (``Grounding.explain``), when it decided
    research: list[SubQuestion] | None = None  # a research answer's trail: each sub-question, the notes read for it


class Thread(BaseModel):
    id: str
    title: str
    created_at: datetime
    updated_at: datetime
    turns: list[Turn] = Field(default_factory=list)


class EntityKind(StrEnum):
    PERSON = "person"
    ORG = "org"
    PLACE = "place"
    MISC = "misc"  # products, works, events…


class NoteEntity(BaseModel):
    """A named entity of one note: its display name, normalised key, kind, mentions and merged variants."""

    name: str
    normalized: str
    kind: EntityKind
    count: int = 1
    variants: list[str] = Field(default_factory=list)


class EntitySummary(BaseModel):
    """An entity across the vault (catalog): how many notes mention it and how often."""

    name: str
    normalized: str
    kind: EntityKind
    notes: int
    mentions: int


class AnswerEntity(BaseModel):
    """An entity shown with a chat answer: who or what the sources mention, and other notes about it."""

    name: str
    normalized: str
    kind: EntityKind
    tag: str | None = None
    notes: list[Source] = Field(default_factory=list)


class LearnOutcome(StrEnum):
    PROCESSED = "processed"  # an artifact was written or extended
    SKIPPED = "skipped"  # nothing written, with the reason
    FAILED = "failed"  # an error, with its message


class LearnedNote(BaseModel):
    """The learner's record of one note: when it was last processed and what came of the last attempt."""

    path: str
    processed_at: datetime | None = None  # last attempt that did the work (reprocessing waits from here)
    checked_at: datetime | None = None  # last time the learner looked at the note
    outcome: LearnOutcome
    reason: str = ""
    artifact: str | None = None  # vault path of the insight written or extended


class SynapsePair(BaseModel):
    """A pair of notes the synapse finder considered (``a`` < ``b``); never considered twice."""

    a: str
    b: str
    score: float
    outcome: LearnOutcome
    reason: str = ""
    artifact: str | None = None
    created_at: datetime


class Verdict(StrEnum):
    """What a click said of a note for a question: it was opened, it was it (« c'était ça »), it was not."""

    OPENED = "opened"
    YES = "yes"
    NO = "no"


class Mark(BaseModel):
    """A question recorded against a note by the user's click (never written in the vault, never sent)."""

    id: int | None = None
    question: str
    path: str
    verdict: Verdict
    created_at: datetime
