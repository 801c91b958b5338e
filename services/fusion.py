"""Rank fusion of the dense and sparse result lists, and grouping of chunk hits into notes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.models import StoreHit

RRF_K = 60  # the classic reciprocal-rank-fusion constant: damps the head of each list
DENSE_WEIGHT = 1.0
SPARSE_WEIGHT = 1.0
TITLE_WEIGHT = 0.5  # weight of a title/alias match, as if ranked first in a third list


@dataclass
class FusedHit:
    """One chunk with its rank in each list (1-based, None when absent) and its fused score."""

    hit: StoreHit
    score: float = 0.0
    dense_rank: int | None = None
    sparse_rank: int | None = None
    title_match: bool = False
    matched_terms: list[str] = field(default_factory=list)


def rrf(rank: int | None, weight: float, k: int = RRF_K) -> float:
    return 0.0 if rank is None else weight / (k + rank)


def fuse(
    dense: Sequence[StoreHit],
    sparse: Sequence[StoreHit],
    dense_weight: float = DENSE_WEIGHT,
    sparse_weight: float = SPARSE_WEIGHT,
    k: int = RRF_K,
) -> list[FusedHit]:
    """Weighted reciprocal rank fusion of two ranked lists of chunks, best first."""
    fused: dict[str, FusedHit] = {}
    for rank, hit in enumerate(dense, start=1):
        fused.setdefault(hit.id, FusedHit(hit)).dense_rank = rank
    for rank, hit in enumerate(sparse, start=1):
        fused.setdefault(hit.id, FusedHit(hit)).sparse_rank = rank
    for item in fused.values():
        item.score = rrf(item.dense_rank, dense_weight, k) + rrf(item.sparse_rank, sparse_weight, k)
    return sorted(fused.values(), key=lambda item: (-item.score, item.hit.id))


def boost_title_matches(
    hits: list[FusedHit], is_match: Callable[[dict[str, Any]], bool], weight: float = TITLE_WEIGHT
) -> list[FusedHit]:
    """Add a first-rank bonus to chunks whose note title or alias the query names."""
    for item in hits:
        if is_match(item.hit.payload):
            item.title_match = True
            item.score += rrf(1, weight)
    return sorted(hits, key=lambda item: (-item.score, item.hit.id))


def group_by_note(hits: Sequence[FusedHit], limit: int) -> list[list[FusedHit]]:
    """Chunks grouped by note, notes ordered by their best chunk; each group best chunk first."""
    groups: dict[str, list[FusedHit]] = {}
    for item in hits:
        groups.setdefault(item.hit.payload["path"], []).append(item)
    return list(groups.values())[:limit]
