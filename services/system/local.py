"""Searching from the calling process (the CLI): through the running indexer, else on the store opened here.

(The index pipeline is assembled by ``services.rebuild.open_pipeline``, for the CLI and the indexer alike.)
"""

from __future__ import annotations

from services.config import Settings
from services.embedding import load_embedder
from services.search import SearchEngine, SearchRequest, SearchResponse
from services.store import open_store
from services.system.running import SystemClient


def search_anywhere(settings: Settings, request: SearchRequest) -> SearchResponse:
    """Through the running indexer when there is one, else on the store opened here."""
    client = SystemClient(settings)
    if client.running():
        return client.search(request)
    store = open_store(settings)
    try:
        recorded = store.recorded_model()  # the index answers with the model that built it
        model = recorded.name if recorded is not None else settings.embedding_model
        embedder = load_embedder(model, threads=settings.torch_threads)
        store.ensure_collection(embedder.dim, embedder.name)
        return SearchEngine(store, embedder).search(request)
    finally:
        store.close()
