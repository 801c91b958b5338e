"""What an answer stands on: the user's notes before ObsiRAG's own saved conversations and research notes.

A saved conversation repeats the notes it quoted, and its title is a question, so a question asked again
matches it better than the note that answers: it ranks after every retrieved note when one of the notes it
links to (its sources) is among them, or when the best note scores near it. Alone (no such note) it still
answers: saved conversations stay searchable.
"""

from __future__ import annotations

from collections.abc import Callable

from services.retrieval.search import SearchResult
from services.vault.models import NoteType

DERIVED = (NoteType.CONVERSATION, NoteType.RESEARCH)  # ObsiRAG's answers saved as notes: they quote the notes
CONVERSATION_SHARE = 0.8  # without a quoted note retrieved: last when the best note scores this share of it
BELOW = 0.999  # of the last note's score


def below_notes(results: list[SearchResult], quoted: Callable[[str], set[str]]) -> list[SearchResult]:
    """``results`` with each saved conversation moved after the notes when it quotes one (``quoted(path)``:
    the notes it links to) or one scores near it; best first."""
    notes = {r.path: r.score for r in results if r.note_type not in DERIVED}
    if not notes or len(notes) == len(results):
        return results
    ranked = [_below(r, notes, quoted) if r.note_type in DERIVED else r for r in results]
    return sorted(ranked, key=lambda r: -r.score)


def _below(result: SearchResult, notes: dict[str, float], quoted: Callable[[str], set[str]]) -> SearchResult:
    """Last, after every note, when it quotes one of them or one scores near it: it never stands beside the
    note as a candidate either."""
    quotes = any(path in notes for path in quoted(result.path))
    if not quotes and max(notes.values()) < CONVERSATION_SHARE * result.score:
        return result
    return result.model_copy(update={"score": min(result.score, min(notes.values()) * BELOW)})
