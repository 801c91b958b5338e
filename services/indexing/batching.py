"""Embedding a sync's texts: the embedding cache serves the texts it knows, the model encodes the rest
in batches of similar length under a token budget (``services.retrieval.batches``)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from services.retrieval.batches import length_batches
from services.retrieval.embedding import Embedder
from services.retrieval.embedding_cache import EmbeddingCache


def embed_texts(
    embedder: Embedder,
    cache: EmbeddingCache,
    texts: list[str],
    token_counts: list[int],
    between: Callable[[], None] | None = None,
) -> tuple[np.ndarray, list[int]]:
    """Vectors of ``texts`` and the indices the model encoded: the cache serves the texts it knows,
    the rest go through the model in batches of similar length (``length_batches``).

    ``between``: called between two encode calls of a batch per model thread (the indexer lets a note saved
    meanwhile cut in)."""
    vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    known = cache.lookup(texts)
    for i, vector in known.items():
        vectors[i] = vector
    missing = [i for i in range(len(texts)) if i not in known]
    batches = length_batches([token_counts[i] for i in missing], embedder.batch_size, embedder.batch_tokens)
    per_call = max(1, embedder.passage_threads)  # one batch for each of the model's threads (E5Embedder.encode)
    for number, first in enumerate(range(0, len(batches), per_call)):
        if number and between is not None:
            between()
        indices = [missing[j] for batch in batches[first : first + per_call] for j in batch]
        vectors[indices] = embedder.encode([texts[i] for i in indices])
        # Stored at once: a crash before the store write re-embeds nothing at the restart.
        cache.store([texts[i] for i in indices], vectors[indices])
    return vectors, missing
