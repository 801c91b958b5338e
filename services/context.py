"""From search results to what the model reads: context packing (the guard is ``services.grounding``)."""

from __future__ import annotations

from dataclasses import dataclass

from services import vault
from services.chunking import split_sections
from services.config import Settings
from services.search import SearchResult

CHARS_PER_TOKEN = 3.2  # conservative for French with small-vocabulary tokenizers
MAIN_NOTE_SHARE = 0.5  # of the context budget, for the main note's own text


@dataclass
class ContextBlock:
    n: int
    path: str
    title: str
    heading: str
    text: str
    primary: bool = False


def token_budget(settings: Settings, reserved_tokens: int = 300) -> int:
    """Context tokens left for excerpts once the answer and the prompt's own text are reserved."""
    return max(256, settings.llm_context_tokens - settings.llm_max_tokens - reserved_tokens)


def estimate_tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + 1


def pack_context(
    settings: Settings, results: list[SearchResult], main: SearchResult | None, budget_tokens: int
) -> list[ContextBlock]:
    """Numbered excerpts within the budget: the main note's relevant sections first, then other notes' best chunks."""
    blocks: list[ContextBlock] = []
    remaining = budget_tokens
    if main is not None:
        text = main_note_text(settings, main, int(budget_tokens * MAIN_NOTE_SHARE))
        blocks.append(ContextBlock(1, main.path, main.title, main.heading, text, primary=True))
        remaining -= estimate_tokens(text)
    for result in results:
        if main is not None and result.path == main.path:
            continue
        cost = estimate_tokens(result.text)
        if cost > remaining:
            continue
        blocks.append(ContextBlock(len(blocks) + 1, result.path, result.title, result.heading, result.text))
        remaining -= cost
    return blocks


def main_note_text(settings: Settings, main: SearchResult, budget_tokens: int) -> str:
    """The main note's best chunk, then its other sections in order, up to the budget."""
    pieces = [main.text]
    used = estimate_tokens(main.text)
    note = vault.read_note_if_readable(settings.vault, main.path, settings.max_file_bytes)
    if note is None:
        return main.text  # the note changed under us: the indexed chunk is still a faithful excerpt
    for section in split_sections(note.body):
        text = "\n".join(section.lines).strip()
        if not text or text in main.text or main.text in text:
            continue
        heading = " > ".join(section.heading_path)
        piece = f"## {heading}\n{text}" if heading else text
        if used + estimate_tokens(piece) > budget_tokens:
            break
        pieces.append(piece)
        used += estimate_tokens(piece)
    return "\n\n".join(pieces)
