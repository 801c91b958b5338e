"""What the grounding guard takes from a reranker, when one ran (``SearchResult.rerank_score``).

A cross-encoder read the question with each note's best passage: its score is a second opinion on whether
the vault answers, and its order is the better one to pick the main note from. The guard's probability is
blended with the reranker's best score (``RERANK_SHARE``), and the notes the chat answers from follow the
reranker's order. Neither number is fitted: no reranker can be pulled where ObsiRAG is built; a user with
one can fit them with ``bench/grounding.py`` (docs/performance.md, "Grounding"). Without a reranker
nothing here runs, and the guard decides exactly as before.
"""

from __future__ import annotations

from services.retrieval.search import SearchResult

RERANK_SHARE = 0.5  # the reranker's share of the guard's probability
RERANK_MARGIN = 0.15  # the main note's lead over the next one, in reranker score


def reranked(results: list[SearchResult]) -> bool:
    return any(result.rerank_score is not None for result in results)


def blend_guard(guard: float, results: list[SearchResult]) -> float:
    """The guard's probability with the reranker's best score mixed in (unchanged without a reranker)."""
    scores = [result.rerank_score for result in results if result.rerank_score is not None]
    return (1.0 - RERANK_SHARE) * guard + RERANK_SHARE * max(scores) if scores else guard


def supporting(results: list[SearchResult], share: float) -> list[SearchResult]:
    """The notes to answer from in the reranker's order: those it scores within ``share`` of its best."""
    ordered = sorted(results, key=lambda result: -(result.rerank_score or 0.0))
    best = ordered[0].rerank_score or 0.0
    return [result for result in ordered if (result.rerank_score or 0.0) >= best * share]


def main_note(notes: list[SearchResult], max_candidates: int) -> tuple[SearchResult | None, list[SearchResult]]:
    """The reranker's best note when it leads the next by ``RERANK_MARGIN`` (and is not low-confidence OCR);
    else no main note, and the close ones to cite side by side."""
    best = notes[0].rerank_score or 0.0
    close = [note for note in notes[1:] if best - (note.rerank_score or 0.0) < RERANK_MARGIN]
    if not close and not notes[0].ocr_low:
        return notes[0], []
    return None, [notes[0], *close][:max_candidates]
