"""What an answer stands on: the user's notes before ObsiRAG's own saved conversations.

A saved conversation repeats the notes it quoted (and its questions name the topic, so its title matches):
it ranks below the best note whenever that note scores near it, and so never becomes the main note in the
note's place. Alone (no note near it) it still answers: saved conversations stay searchable.
"""

from __future__ import annotations

from services.retrieval.search import SearchResult
from services.vault.models import NoteType

CONVERSATION_SHARE = 0.8  # a conversation goes below the best note scoring at least this share of its own
BELOW = 0.999  # of that note's score


def below_notes(results: list[SearchResult]) -> list[SearchResult]:
    """``results`` with each saved conversation moved below the best note near it, best first."""
    notes = [r.score for r in results if r.note_type != NoteType.CONVERSATION]
    if not notes or len(notes) == len(results):
        return results
    best = max(notes)
    ranked = [
        r.model_copy(update={"score": best * BELOW})
        if r.note_type == NoteType.CONVERSATION and best >= CONVERSATION_SHARE * r.score and r.score >= best
        else r
        for r in results
    ]
    return sorted(ranked, key=lambda r: -r.score)
