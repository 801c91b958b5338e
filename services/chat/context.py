"""From search results to what the model reads: context packing (the guard is ``services.chat.grounding``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from services.catalog.models import Source
from services.config import Settings
from services.indexing.chunking import split_sections
from services.llm.limits import TokenCount, estimate_tokens
from services.retrieval.search import SearchResult
from services.vault.items import read_source_if_readable

MAIN_NOTE_SHARE = 0.5  # of the context budget, for the main note's own text


@dataclass
class ContextBlock:
    n: int
    path: str
    title: str
    heading: str
    text: str
    primary: bool = False
    page: int | None = None  # an attachment's page holding the excerpt
    screenshot: bool = False  # an image's OCR text (``SearchResult.ocr``): its source is cited as such
    dated: datetime | None = None  # a period's note: its date in the period

    @property
    def label(self) -> str:
        """How the excerpt is named to the model and in citations: « Manuel.pdf, p. 12 »."""
        return f"{self.title}, p. {self.page}" if self.page is not None else self.title


def pack_context(
    settings: Settings,
    results: list[SearchResult],
    main: SearchResult | None,
    budget_tokens: int,
    count: TokenCount = estimate_tokens,
) -> list[ContextBlock]:
    """Numbered excerpts within the budget (``count``'s tokens): the main note's relevant sections first
    (up to ``MAIN_NOTE_SHARE`` of the budget, its best chunk cut if it alone is larger), then other notes'
    best chunks."""
    blocks: list[ContextBlock] = []
    remaining = budget_tokens
    if main is not None:
        share = max(int(budget_tokens * MAIN_NOTE_SHARE), min(count(main.text), budget_tokens))
        text = main_note_text(settings, main, share, count)
        if text:
            blocks.append(ContextBlock(1, main.path, main.title, main.heading, text, True, main.page, main.screenshot))
            remaining -= count(text)
    for result in results:
        if main is not None and result.path == main.path:
            continue
        cost = count(result.text)
        if cost > remaining:
            continue
        n = len(blocks) + 1
        excerpt = (result.path, result.title, result.heading, result.text)
        blocks.append(ContextBlock(n, *excerpt, page=result.page, screenshot=result.screenshot))
        remaining -= cost
    return blocks


def main_note_text(
    settings: Settings, main: SearchResult, budget_tokens: int, count: TokenCount = estimate_tokens
) -> str:
    """The main note's best chunk, then its other sections in order, up to the budget."""
    first = clip_tokens(main.text, budget_tokens, count)
    pieces = [first]
    used = count(first)
    note = read_source_if_readable(settings, main.path)
    if note is None or first != main.text:
        return first  # the note changed under us (the indexed chunk is still faithful), or no room left
    for section in split_sections(note.markdown):  # the parse read_note made
        text = "\n".join(section.lines).strip()
        if not text or text in main.text or main.text in text:
            continue
        heading = " > ".join(section.heading_path)
        piece = f"## {heading}\n{text}" if heading else text
        cost = count("\n\n" + piece)
        if used + cost > budget_tokens:
            continue  # a section too long for the room left: the next, shorter ones may fit
        pieces.append(piece)
        used += cost
    return "\n\n".join(pieces)


def clip_tokens(text: str, budget_tokens: int, count: TokenCount) -> str:
    """The longest start of ``text`` (cut between two words) that ``count`` finds within the budget."""
    if count(text) <= budget_tokens:
        return text
    words = text.split(" ")
    low, high = 0, len(words)
    while low < high:  # binary search on the number of words kept
        middle = (low + high + 1) // 2
        if count(" ".join(words[:middle])) <= budget_tokens:
            low = middle
        else:
            high = middle - 1
    return " ".join(words[:low])


def sources_of(blocks: list[ContextBlock]) -> list[Source]:
    """The sources an answer from ``blocks`` cites, numbered as the blocks are."""
    return [
        Source(
            n=b.n,
            title=b.title,
            path=b.path,
            heading=b.heading,
            primary=b.primary,
            page=b.page,
            screenshot=b.screenshot,
        )
        for b in blocks
    ]
