"""How close each sentence of a passage is to a question, by the embedding model the indexer has loaded.

The chat quotes the sentences of its notes that answer a question (``services.chat.quoting``); this gives the
meaning half of that choice (the lexical half is the grounding guard's). Sentences are embedded as passages,
through the embedding cache: a note's sentences cost their encoding once, a question asked again nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from services.retrieval.embedding import Embedder
from services.retrieval.embedding_cache import EmbeddingCache, encode_cached

MAX_SENTENCES = 64  # what one request may score (the chat sends fewer: ``quoting.MAX_SCORED``)


def sentence_scores(
    embedder: Embedder, query: str, sentences: Sequence[str], cache: EmbeddingCache | None = None
) -> list[float]:
    """The cosine of ``query`` (embedded as a query) with each of ``sentences`` (as passages), in order."""
    sentences = list(sentences)[:MAX_SENTENCES]
    if not sentences:
        return []
    query_vector = _unit(np.asarray(embedder.encode_query(query), dtype=np.float32))
    return [round(float(c), 4) for c in _vectors(embedder, sentences, cache) @ query_vector]


def _vectors(embedder: Embedder, sentences: list[str], cache: EmbeddingCache | None) -> np.ndarray:
    vectors = encode_cached(embedder, sentences, cache)
    norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return vectors / norms


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / max(float(np.linalg.norm(vector)), 1e-12)
