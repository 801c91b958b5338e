"""Synthetic dense vectors shaped like e5's passages, for the store benches (``store_memory``, ``store_load``).

A graph build and a dense search depend on how the vectors cluster: isotropic random vectors have no
neighbourhoods, and make both look other than they are on real chunks.
"""

from __future__ import annotations

import numpy as np

CENTRES = 400  # topics


def synthetic_vectors(rng: np.random.Generator, points: int, dim: int) -> np.ndarray:
    """e5's passages share a strong common direction (any two have a cosine near 0.75) and cluster by topic."""
    common = rng.normal(0, 1, dim)
    centres = common / np.linalg.norm(common) * 1.6 + rng.normal(0, 1 / np.sqrt(dim), (CENTRES, dim))
    members = centres[rng.integers(0, CENTRES, points)]
    return normalised(members + rng.normal(0, 0.6 / np.sqrt(dim), (points, dim))).astype(np.float32)


def near_queries(rng: np.random.Generator, vectors: np.ndarray, count: int) -> np.ndarray:
    """``count`` queries, each near one stored vector (a question about a passage lies close to it)."""
    picked = rng.choice(len(vectors), count, replace=False)
    dim = vectors.shape[1]
    return normalised(vectors[picked] + rng.normal(0, 0.35 / np.sqrt(dim), (count, dim))).astype(np.float32)


def normalised(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)
