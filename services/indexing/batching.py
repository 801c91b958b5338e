"""Embedding a sync's texts: the embedding cache serves the texts it knows, the model encodes the rest
in batches of similar length (the model pads a batch to its longest text)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from services.retrieval.embedding import Embedder
from services.retrieval.embedding_cache import EmbeddingCache

# What one forward pass of the embedding model costs on top of its tokens, counted in padded tokens
# (~12 ms for all-MiniLM-L6-v2 on one CPU thread, where a token costs ~0.3 ms; bench/index_throughput.py).
BATCH_COST_TOKENS = 48


def embed_texts(
    embedder: Embedder,
    cache: EmbeddingCache,
    texts: list[str],
    token_counts: list[int],
    between: Callable[[], None] | None = None,
) -> tuple[np.ndarray, list[int]]:
    """Vectors of ``texts`` and the indices the model encoded: the cache serves the texts it knows,
    the rest go through the model in batches of similar length (see ``length_batches``).

    ``between``: called between two encode batches (the indexer lets a note saved meanwhile cut in)."""
    vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    known = cache.lookup(texts)
    for i, vector in known.items():
        vectors[i] = vector
    missing = [i for i in range(len(texts)) if i not in known]
    for number, batch in enumerate(length_batches([token_counts[i] for i in missing], embedder.batch_size)):
        if number and between is not None:
            between()
        indices = [missing[j] for j in batch]
        vectors[indices] = embedder.encode([texts[i] for i in indices])
        # Stored at once: a crash before the store write re-embeds nothing at the restart.
        cache.store([texts[i] for i in indices], vectors[indices])
    return vectors, missing


def length_batches(token_counts: Sequence[int], max_size: int, batch_cost: int = BATCH_COST_TOKENS) -> list[list[int]]:
    """Indices of ``token_counts`` cut into encode batches of at most ``max_size`` texts of similar length.

    The model pads every text of a batch to the batch's longest, and on CPU a padded token costs as much
    as a real one: in one ``encode`` call over a sync batch's chunks (sorted by characters, cut every
    ``max_size``) a quarter of the tokens were padding. Longest first, the cheapest cut into contiguous
    batches (size × longest + ``batch_cost`` each) is a small dynamic programme.
    """
    order = sorted(range(len(token_counts)), key=lambda i: -token_counts[i])
    best = [0.0] + [math.inf] * len(order)  # best[end]: cheapest cost of order[:end]
    cut = [0] * (len(order) + 1)
    for end in range(1, len(order) + 1):
        for start in range(max(0, end - max_size), end):
            cost = best[start] + (end - start) * token_counts[order[start]] + batch_cost
            if cost < best[end]:
                best[end], cut[end] = cost, start
    batches: list[list[int]] = []
    end = len(order)
    while end:
        batches.append(order[cut[end] : end])
        end = cut[end]
    return batches[::-1]
