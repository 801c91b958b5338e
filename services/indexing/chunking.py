"""Heading-path chunks sized in the embedding model's tokens.

A note body is cut into heading sections (``services.vault.reader``: top-level ATX ``#`` headings outside code,
block ids left out), each section into paragraphs (blank-line separated; a code block is never cut by
its blank lines), and paragraphs
are packed greedily into chunks. A paragraph larger than the budget is cut into overlapping windows on
token boundaries, ending at a sentence or line end when one lies in the window's last fifth.

The guarantee: ``embedding_text(note.title, chunk, fitted_context(note, …))`` of every chunk fits in
``max_tokens`` model tokens, because each section's budget is ``max_tokens`` minus the tokens of its
prefix (the title and heading line, and the note's context line: ``services.indexing.context``), and every
chunk is checked with one real count before it is emitted (and split again if joins cost extra tokens).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from pydantic import BaseModel, Field

from services.indexing.context import chunk_context
from services.retrieval.embedding import TokenCounter
from services.vault.models import ParsedNote
from services.vault.reader import MarkdownDoc, Section, read_markdown

PREFIX_SEPARATOR = " > "
PREFIX_MAX_CHARS = 120  # a runaway heading must not eat the whole budget
CONTEXT_SHARE = 3  # the note's context line takes at most 1/3 of a chunk's tokens
SENTENCE_TAIL = 0.2  # look for a sentence end in the last 20% of a window
WORD_BACKOFF = 8  # tokens a window start may move back to begin on a word
PARAGRAPH_JOIN = "\n\n"
PAUSE_PAGES = 100  # pages cut between two pauses of a document's chunking (~0.2 s)

_SENTENCE_END = frozenset(".!?…;:")


def embedding_prefix(note_title: str, heading_path: list[str], context: str = "") -> str:
    """The lines put before a chunk's text: "Title > Heading > Sub-heading\\n" (or ""), then the note's
    ``context`` line (aliases and description, ``context.chunk_context``) when it has one."""
    parts = [note_title.strip()] if note_title.strip() else []
    for heading in heading_path:
        if heading.strip() and not (parts and heading.strip().casefold() == parts[-1].casefold()):
            parts.append(heading.strip())  # skips an H1 that repeats the title
    prefix = PREFIX_SEPARATOR.join(parts)
    if len(prefix) > PREFIX_MAX_CHARS:
        prefix = prefix[: PREFIX_MAX_CHARS - 1].rstrip() + "…"
    lines = [line for line in (prefix, context.strip()) if line]
    return "".join(line + "\n" for line in lines)


def embedding_text(note_title: str, chunk: Chunk, context: str = "") -> str:
    """The text actually embedded: the title and heading path as one short line, the note's context line,
    then the chunk text.

    ``chunk_note`` sizes chunks so that this text fits in its ``max_tokens``; pass the same title and the
    note's ``context.chunk_context``.
    """
    return embedding_prefix(note_title, chunk.heading_path, context) + chunk.text


def split_sections(body: str | MarkdownDoc) -> list[Section]:
    """Heading sections of a body, in order (``services.vault.reader``); heading lines themselves are dropped."""
    return (read_markdown(body) if isinstance(body, str) else body).sections()


def split_paragraphs(lines: list[str], code: list[bool] | None = None) -> list[str]:
    """Blank-line separated blocks; blank lines inside a code block (``code`` flags) do not split it."""
    blocks: list[list[str]] = [[]]
    for line, in_code in zip(lines, code or [False] * len(lines), strict=True):
        if not in_code and not line.strip():
            blocks.append([])
        else:
            blocks[-1].append(line)
    texts = ("\n".join(block).strip("\n").rstrip() for block in blocks)
    return [text for text in texts if text.strip()]


def _window_end(text: str, spans: list[tuple[int, int]], start: int, stop: int) -> int:
    """Index after a window's last token: a sentence or line end in the window's tail, else a word end."""
    if stop >= len(spans):
        return len(spans)
    earliest = max(start + 1, stop - max(1, int((stop - start) * SENTENCE_TAIL)))
    gaps = [(i, text[spans[i - 1][1] : spans[i][0]]) for i in range(stop, earliest - 1, -1)]
    for i, gap in gaps:
        if "\n" in gap or (gap and text[spans[i - 1][1] - 1] in _SENTENCE_END):
            return i
    return next((i for i, gap in gaps if gap), stop)


def _word_start(spans: list[tuple[int, int]], index: int, floor: int) -> int:
    """Move a window start back (a few tokens at most) so that it does not begin inside a word."""
    for i in range(index, max(floor, index - WORD_BACKOFF) - 1, -1):
        if i == 0 or spans[i][0] != spans[i - 1][1]:
            return i
    return index


def window_text(text: str, spans: list[tuple[int, int]], budget: int, overlap: int) -> Iterator[str]:
    """Windows of at most ``budget`` tokens over ``text``, consecutive ones sharing ``overlap`` tokens.

    ``spans`` are the token offsets of ``text``; ``overlap`` is capped at half a window.
    """
    overlap = min(max(overlap, 0), budget // 2)
    start = 0
    while start < len(spans):
        end = _window_end(text, spans, start, min(start + budget, len(spans)))
        yield text[spans[start][0] : spans[end - 1][1]].strip()
        if end >= len(spans):
            return
        start = _word_start(spans, max(end - overlap, start + 1), start + 1)


class _Packer:
    """Builds the chunks of one note; every emitted chunk's embedding text fits in ``max_tokens``."""

    def __init__(self, title: str, counter: TokenCounter, max_tokens: int, overlap: int, context: str = "") -> None:
        self.title, self.context, self.counter = title, context, counter
        self.max_tokens, self.overlap = max_tokens, overlap
        self.chunks: list[Chunk] = []
        self.page: int | None = None  # set per page by ``chunk_pages``: every chunk of it carries the number

    def add_section(self, section: Section) -> None:
        paragraphs = split_paragraphs(section.lines, section.code)
        if not paragraphs:
            return
        prefix = embedding_prefix(self.title, section.heading_path, self.context)
        budget = self.max_tokens - (self.counter.count(prefix) if prefix else 0)
        if budget < max(1, self.max_tokens // 4):
            raise ValueError(f"max_tokens={self.max_tokens} leaves no room for the prefix {prefix!r}")
        parts: list[str] = []
        used = 0
        for paragraph in paragraphs:
            size = self.counter.count(paragraph)
            if size > budget:
                self._emit(parts, section.heading_path, budget)
                self._emit_windows(paragraph, section.heading_path, budget)
                parts, used = [], 0
                continue
            if parts and used + size > budget:
                self._emit(parts, section.heading_path, budget)
                parts, used = [], 0
            parts.append(paragraph)
            used += size
        self._emit(parts, section.heading_path, budget)

    def _chunk(self, text: str, heading_path: list[str]) -> Chunk:
        count = self.counter.count(embedding_prefix(self.title, heading_path, self.context) + text)
        return Chunk(index=len(self.chunks), text=text, heading_path=heading_path, token_count=count, page=self.page)

    def _emit(self, parts: list[str], heading_path: list[str], budget: int) -> None:
        """Emit joined paragraphs as one chunk after a real count; split again if joins cost tokens."""
        if not parts:
            return
        chunk = self._chunk(PARAGRAPH_JOIN.join(parts), heading_path)
        if chunk.token_count <= self.max_tokens:
            self.chunks.append(chunk)
        elif len(parts) > 1:
            half = len(parts) // 2
            self._emit(parts[:half], heading_path, budget)
            self._emit(parts[half:], heading_path, budget)
        else:
            self._emit_windows(parts[0], heading_path, budget - (chunk.token_count - self.max_tokens))

    def _emit_windows(self, paragraph: str, heading_path: list[str], budget: int) -> None:
        spans = self.counter.offsets(paragraph)
        for text in window_text(paragraph, spans, max(budget, 1), self.overlap):
            if not text:
                continue
            chunk = self._chunk(text, heading_path)
            if chunk.token_count <= self.max_tokens:
                self.chunks.append(chunk)
            elif budget > 1:  # re-tokenising a slice can add a token or two: cut that window smaller
                self._emit_windows(text, heading_path, budget - (chunk.token_count - self.max_tokens))
            else:
                raise ValueError(f"max_tokens={self.max_tokens} cannot hold one token after the prefix")


def fitted_context(note: ParsedNote, counter: TokenCounter, max_tokens: int) -> str:
    """The note's context line (``context.chunk_context``) cut to a third of ``max_tokens`` at most: the
    chunk's own text keeps the room (a small ``chunk_tokens`` gets a shorter context, not an error)."""
    context = chunk_context(note)
    while context and counter.count(context) > max_tokens // CONTEXT_SHARE:
        cut = len(context) * 3 // 4
        context = context[:cut].rstrip(" ,.…") + "…" if cut > 8 else ""
    return context


def embedding_texts(note: ParsedNote, chunks: list[Chunk], counter: TokenCounter, max_tokens: int) -> list[str]:
    """What the index embeds for ``chunks`` of ``note`` (a note's or a document's): each chunk's
    ``embedding_text`` with the note's ``fitted_context`` line."""
    context = fitted_context(note, counter, max_tokens)
    return [embedding_text(note.title, chunk, context) for chunk in chunks]


def chunk_note(note: ParsedNote, counter: TokenCounter, max_tokens: int, overlap: int) -> list[Chunk]:
    """Chunks of ``note.body`` in document order, indices 0..n-1.

    Each chunk keeps the heading path above it (heading lines are not repeated in its text), holds
    whole paragraphs when they fit, and a paragraph longer than the budget becomes windows of the budget
    with ``overlap`` tokens shared between consecutive windows (at most half a window).
    ``token_count`` is the token count of ``embedding_text(note.title, chunk, fitted_context(note, …))``,
    never above ``max_tokens``: the prefix lines are accounted for, so pass the model's full maximum here.
    Raises ``ValueError`` when a section's prefix leaves less than a quarter of ``max_tokens``.
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be positive")
    packer = _Packer(note.title, counter, max_tokens, overlap, fitted_context(note, counter, max_tokens))
    for section in note.markdown.sections():
        packer.add_section(section)
    return packer.chunks


def chunk_pages(
    title: str,
    pages: list[tuple[int, str]],
    counter: TokenCounter,
    max_tokens: int,
    overlap: int,
    context: str = "",
    between: Callable[[], None] | None = None,
) -> list[Chunk]:
    """Chunks of an attachment's pages, never across two pages, each carrying its page number.

    The text is not Markdown (a ``#`` in a PDF is text): each page is one section without headings,
    packed by paragraphs and windows like a note's section; ``context`` as ``chunk_note`` gives it.
    ``between``: called every ``PAUSE_PAGES`` pages (2,000 pages take seconds to cut: a note may cut in).
    """
    packer = _Packer(title, counter, max_tokens, overlap, context)
    for done, (number, text) in enumerate(pages):
        if between is not None and done and done % PAUSE_PAGES == 0:
            between()
        packer.page = number
        packer.add_section(Section(heading_path=[], lines=text.split("\n"), code=[False] * len(text.split("\n"))))
    return packer.chunks


class Chunk(BaseModel):
    index: int
    text: str
    heading_path: list[str] = Field(default_factory=list)
    token_count: int
    page: int | None = None  # an attachment's page (PDF page, slide, chapter), 1-based; None for a note
