"""Fusion of the dense and sparse result lists, and grouping of chunk hits into notes.

Search fuses by score (``fuse_scores``): each list's scores are min-max normalised over the list, then
mixed with ``DENSE_WEIGHT``/``SPARSE_WEIGHT``; a chunk missing from a list counts as that list's
worst. On the CNIL benchmark it beat every reciprocal-rank fusion we tried (MRR 0.642 → 0.658 against
RRF k=60 on the same lists, see docs/performance.md), because it keeps how far ahead a list's best hit
is: a query word found in one title only gives the sparse list a clear winner that rank fusion flattens. ``fuse`` (RRF)
stays for the rank-only baselines and for callers that have ranks without comparable scores.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.retrieval.models import StoreHit

RRF_K = 60  # the classic reciprocal-rank-fusion constant: damps the head of each list
# Score fusion: shares of the normalised dense and sparse scores; the dense share belongs to the
# embedding model (``embedding.calibration(model).dense_weight``). For all-MiniLM-L6-v2, 0.3/0.7 against
# 0.5/0.5: CNIL MRR 0.671 → 0.659 (within noise) but recall@10 0.874 → 0.887, Service-Public MRR
# 0.818 → 0.866 (at 0.5 the hybrid fell below BM25 alone there: it is an English model and reads French poorly).
DENSE_WEIGHT = 0.3
SPARSE_WEIGHT = 0.7
TITLE_BONUS = 0.1  # added to the fused score (0..1) of a chunk whose note title/alias the query names
# Note ranking (``rank_notes``). A note's score is its best chunk's fused score, plus a share of its
# second best (a note that answers in two places is more likely the one), plus the raw cosine between
# the query and the note's title embedding (a third signal: a question paraphrases a title more often
# than a passage). Raw, not min-max normalised: where titles carry no meaning (Service-Public's notes
# are named by id) normalising would blow their noise up (MRR 0.866 → 0.847); raw it stays 0.865.
# CNIL: MRR 0.659 → 0.693, recall@10 0.887 → 0.906; every weight in 0.6–1.0 (with 0.1) gives ≥ 0.687
# and ≥ 0.906. See docs/performance.md, "Retrieval quality".
SECOND_CHUNK_WEIGHT = 0.1
TITLE_WEIGHT = 0.7
# Only the best notes before the title term get it: reading title vectors costs ~60 µs a point, and on
# CNIL rescoring the first 15, 20, 30 or all notes gives the same ranking (10 loses 0.02 recall@10).
TITLE_RESCORED_NOTES = 20


@dataclass
class FusedHit:
    """One chunk with its rank in each list (1-based, None when absent), raw scores and fused score."""

    hit: StoreHit
    score: float = 0.0
    dense_rank: int | None = None
    sparse_rank: int | None = None
    dense_score: float | None = None
    sparse_score: float | None = None
    title_match: bool = False
    matched_terms: list[str] = field(default_factory=list)


def rrf(rank: int | None, weight: float, k: int = RRF_K) -> float:
    return 0.0 if rank is None else weight / (k + rank)


def _ranked(dense: Sequence[StoreHit], sparse: Sequence[StoreHit]) -> dict[str, FusedHit]:
    fused: dict[str, FusedHit] = {}
    for rank, hit in enumerate(dense, start=1):
        item = fused.setdefault(hit.id, FusedHit(hit))
        item.dense_rank, item.dense_score = rank, hit.score
    for rank, hit in enumerate(sparse, start=1):
        item = fused.setdefault(hit.id, FusedHit(hit))
        item.sparse_rank, item.sparse_score = rank, hit.score
    return fused


def _best_first(items: Sequence[FusedHit]) -> list[FusedHit]:
    return sorted(items, key=lambda item: (-item.score, item.hit.id))


def fuse(
    dense: Sequence[StoreHit],
    sparse: Sequence[StoreHit],
    dense_weight: float = 1.0,
    sparse_weight: float = 1.0,
    k: int = RRF_K,
) -> list[FusedHit]:
    """Weighted reciprocal rank fusion of two ranked lists of chunks, best first."""
    fused = _ranked(dense, sparse)
    for item in fused.values():
        item.score = rrf(item.dense_rank, dense_weight, k) + rrf(item.sparse_rank, sparse_weight, k)
    return _best_first(list(fused.values()))


def normalise(scores: Sequence[float]) -> list[float]:
    """Min-max normalisation to 0..1; a list of equal scores (or of one) is all 1.0."""
    if not scores:
        return []
    low, high = min(scores), max(scores)
    if high - low <= 1e-12:
        return [1.0] * len(scores)
    return [(score - low) / (high - low) for score in scores]


def fuse_scores(
    dense: Sequence[StoreHit],
    sparse: Sequence[StoreHit],
    dense_weight: float = DENSE_WEIGHT,
    sparse_weight: float = SPARSE_WEIGHT,
) -> list[FusedHit]:
    """Convex combination of min-max normalised scores, best first; absent from a list counts as 0."""
    fused = _ranked(dense, sparse)
    for hits, weight in ((dense, dense_weight), (sparse, sparse_weight)):
        for hit, value in zip(hits, normalise([hit.score for hit in hits]), strict=True):
            fused[hit.id].score += weight * value
    return _best_first(list(fused.values()))


def boost_title_matches(
    hits: list[FusedHit], is_match: Callable[[dict[str, Any]], bool], bonus: float = TITLE_BONUS
) -> list[FusedHit]:
    """Add ``bonus`` to chunks whose note title or alias the query names."""
    for item in hits:
        if is_match(item.hit.payload):
            item.title_match = True
            item.score += bonus
    return _best_first(hits)


@dataclass
class NoteHit:
    """A note among the results: its chunks in the hits (best first), its score, its title's similarity,
    and the score that orders the results (``rank``: with the order's own title weight and opening chunk)."""

    chunks: list[FusedHit]
    score: float
    title_similarity: float | None = None
    rank: float = 0.0

    @property
    def best(self) -> FusedHit:
        return self.chunks[0]


def rank_notes(
    hits: Sequence[FusedHit],
    limit: int,
    title_similarities: Callable[[list[FusedHit]], list[float | None]] | None = None,
    title_weight: float = TITLE_WEIGHT,
    second_weight: float = SECOND_CHUNK_WEIGHT,
    rescored: int = TITLE_RESCORED_NOTES,
    order_title_weight: float | None = None,
    order_lead: float = 0.0,
) -> list[NoteHit]:
    """Notes best first: best chunk + ``second_weight`` × second chunk, then for the first ``rescored``
    notes (at least ``limit``) + a share of the query–title cosine.

    Two scores come out: ``score`` adds ``title_weight`` × the cosine (the evidence the grounding guard,
    the main note and the listing were fitted on); ``rank`` orders the notes: ``order_title_weight`` ×
    the cosine (default: the same), and each note's opening chunk (``chunk_index`` 0) counts
    ``order_lead`` more. A model can so rank differently without moving the guard's evidence
    (docs/performance.md, "The order alone").
    ``title_similarities`` gives, for the best chunks of those notes, their note's query–title cosine
    (None for a note without a title vector), in one call: the search reads the vectors in one request.
    """
    order_weight = title_weight if order_title_weight is None else order_title_weight
    notes = []
    for chunks in group_by_note(hits, len(hits)):
        led = [c.score + (order_lead if c.hit.payload.get("chunk_index") == 0 else 0.0) for c in chunks]
        notes.append(
            NoteHit(chunks, _two_best([c.score for c in chunks], second_weight), rank=_two_best(led, second_weight))
        )
    notes.sort(key=_note_order)
    if title_similarities is not None:
        notes = notes[: max(limit, rescored)]
        for note, similarity in zip(notes, title_similarities([n.best for n in notes]), strict=True):
            note.title_similarity = similarity
            if similarity is not None:
                note.score += title_weight * similarity
                note.rank += order_weight * similarity
        notes.sort(key=_note_order)
    return notes[:limit]


def _two_best(scores: list[float], second_weight: float) -> float:
    best = sorted(scores, reverse=True)
    return best[0] + (second_weight * best[1] if len(best) > 1 else 0.0)


def _note_order(note: NoteHit) -> tuple[float, str]:
    return -note.rank, note.best.hit.id


def group_by_note(hits: Sequence[FusedHit], limit: int) -> list[list[FusedHit]]:
    """Chunks grouped by note, notes ordered by their best chunk; each group best chunk first."""
    groups: dict[str, list[FusedHit]] = {}
    for item in hits:
        groups.setdefault(item.hit.payload["path"], []).append(item)
    return list(groups.values())[:limit]
