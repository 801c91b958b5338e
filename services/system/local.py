"""The system's parts opened in the calling process, for the CLI when no system runs (or to rebuild).

``open_pipeline`` is the foreground index pipeline; the indexer's own, which may answer with the model
that built the index while a rebuild runs, is ``services.rebuild.open_index``.
"""

from __future__ import annotations

from services.catalog import Catalog
from services.config import Settings
from services.embedding import load_embedder
from services.indexing import IndexPipeline
from services.search import SearchEngine, SearchRequest, SearchResponse
from services.store import open_store
from services.system.running import SystemClient


def open_pipeline(settings: Settings, reset: bool = False) -> IndexPipeline:
    store = open_store(settings)
    embedder = load_embedder(settings.embedding_model, settings.embedding_batch_size, settings.torch_threads)
    if reset:  # before IndexPipeline checks the recorded model, which a reindex means to replace
        store.reset()
    return IndexPipeline(settings, store, Catalog(settings.catalog_path), embedder)


def search_anywhere(settings: Settings, request: SearchRequest) -> SearchResponse:
    """Through the running indexer when there is one, else on the store opened here."""
    client = SystemClient(settings)
    if client.running():
        return client.search(request)
    store = open_store(settings)
    try:
        recorded = store.recorded_model()  # the index answers with the model that built it
        model = recorded.name if recorded is not None and not settings.qdrant_url else settings.embedding_model
        embedder = load_embedder(model, threads=settings.torch_threads)
        store.ensure_collection(embedder.dim, embedder.name)
        return SearchEngine(store, embedder).search(request)
    finally:
        store.close()
