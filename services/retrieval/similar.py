"""Note-level similarity from the stored chunk vectors: what the synapse finder asks the indexer for.

A note's vector is the normalised mean of its chunks' dense vectors; two notes are as close as the
cosine of their vectors, which is symmetric (a pair scores the same from either side).
"""

from __future__ import annotations

import numpy as np

from services.retrieval.models import StoreFilter
from services.retrieval.store import VectorStore
from services.vault.models import NoteType

CANDIDATE_CHUNKS = 60


def note_vector(store: VectorStore, path: str) -> np.ndarray | None:
    """The normalised mean of the note's chunk vectors, or None when it has no chunk."""
    hits = store.retrieve(sorted(store.point_ids(path)), with_vectors=True)
    vectors = [hit.dense for hit in hits if hit.dense]
    if not vectors:
        return None
    mean = np.asarray(vectors, dtype=np.float32).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm else None


def similar_notes(store: VectorStore, path: str, threshold: float, limit: int) -> list[tuple[str, float]]:
    """User notes (never generated ones) whose cosine with ``path`` is at least ``threshold``, closest first."""
    vector = note_vector(store, path)
    if vector is None:
        return []
    hits = store.search_dense(vector.tolist(), StoreFilter(types=[NoteType.NOTE]), CANDIDATE_CHUNKS)
    scored: list[tuple[str, float]] = []
    for other in dict.fromkeys(hit.payload["path"] for hit in hits):
        other_vector = None if other == path else note_vector(store, other)
        if other_vector is not None:
            scored.append((other, round(float(vector @ other_vector), 4)))
    close = [item for item in scored if item[1] >= threshold]
    return sorted(close, key=lambda item: (-item[1], item[0]))[:limit]
