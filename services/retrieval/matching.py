"""How a query meets the notes' titles and texts: title matches, title cosines, and the snippet shown."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from services.retrieval import lexical
from services.retrieval.fusion import FusedHit
from services.retrieval.store import VectorStore

SNIPPET_CHARS = 240


def flat_fold(text: str) -> str:
    """Case- and accent-insensitive form with single spaces, for substring matching."""
    return " ".join(lexical.fold_accents(text.casefold()).split())


# Cached for titles, aliases and queries (the same titles come back among every search's candidates);
# a result's chunk text, seldom the same twice, is folded by ``flat_fold`` and does not crowd them out.
_fold = lru_cache(maxsize=8192)(flat_fold)


def title_matcher(query: str) -> Callable[[dict[str, Any]], bool]:
    folded_query = f" {_fold(query)} "

    def matches(payload: dict[str, Any]) -> bool:
        names = [payload.get("title", ""), *payload.get("aliases", [])]
        return any(len(name) >= 3 and f" {_fold(name)} " in folded_query for name in names if name)

    return matches


def title_similarities(
    store: VectorStore, query_vector: Sequence[float]
) -> Callable[[list[FusedHit]], list[float | None]]:
    """The cosine between the query and the title vector of each hit's note (None when it has none)."""
    query = np.asarray(query_vector, dtype=np.float32)
    query /= max(float(np.linalg.norm(query)), 1e-12)

    def similarities(items: list[FusedHit]) -> list[float | None]:
        vectors = store.title_vectors([item.hit.id for item in items])
        found = [vectors.get(item.hit.id) for item in items]
        present = [vector for vector in found if vector is not None]
        if not present:
            return [None] * len(items)
        matrix = np.asarray(present, dtype=np.float32)
        cosines = iter((matrix @ query) / np.maximum(np.linalg.norm(matrix, axis=1), 1e-12))
        return [float(next(cosines)) if vector is not None else None for vector in found]

    return similarities


def snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """A window of the chunk around the first query term it contains."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    folded = flat_fold(flat)
    positions = [folded.find(word) for word in _fold(query).split() if len(word) > 3]
    hits = [p for p in positions if p >= 0]
    start = max(0, min(hits) - width // 4) if hits else 0
    end = min(len(flat), start + width)
    return ("…" if start else "") + flat[start:end].strip() + ("…" if end < len(flat) else "")
