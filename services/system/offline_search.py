"""Searching from the calling process (the CLI): through the running indexer, else on the store opened here.

(The index pipeline is assembled by ``services.indexing.rebuild.open_pipeline``, for the CLI and the indexer alike.)
"""

from __future__ import annotations

from services.catalog import Catalog
from services.config import Language, Settings
from services.retrieval.embedding import load_embedder
from services.retrieval.embedding_cache import EmbeddingCache
from services.retrieval.learned import LearnedMarks
from services.retrieval.reranker import ChosenReranker
from services.retrieval.search import SearchEngine, SearchRequest, SearchResponse
from services.retrieval.store import open_store
from services.system.client import DOWN, SystemClient, SystemNotRunning


def search_anywhere(settings: Settings, request: SearchRequest, lang: Language = "en") -> SearchResponse:
    """Through the running indexer when there is one (waited for while Redis or the indexer restart: it
    owns the store), else on the store opened here. ``SystemNotRunning`` says why the running system
    cannot answer (in ``lang``); ``StoreLockedError``, that another process (``obsirag index``) holds the store."""
    client = SystemClient(settings)
    if client.wait_running(settings.search_timeout):
        try:
            return client.search(request)
        except DOWN:  # Redis went away during the search
            gone = "Redis a disparu pendant la recherche" if lang == "fr" else "Redis went away during the search"
            raise SystemNotRunning(client.unavailable(lang) or gone) from None
    if message := client.unavailable(lang):
        raise SystemNotRunning(message)
    store, catalog = open_store(settings), Catalog(settings.catalog_path)
    try:
        recorded = store.recorded_model()  # the index answers with the model that built it
        model = recorded.name if recorded is not None else settings.embedding_model
        served = settings.embedding_served if model == settings.embedding_model else None
        embedder = load_embedder(model, threads=settings.torch_threads, cache=settings.model_cache, served=served)
        store.ensure_collection(embedder.dim, embedder.name)
        # The cache keeps the fixed reference questions' vectors: an English search embeds no axis again.
        cache = EmbeddingCache.of(settings, embedder)
        marks, rerankers = LearnedMarks(catalog.marks), ChosenReranker(settings)
        try:
            return SearchEngine(store, embedder, marks=marks, rerankers=rerankers, cache=cache).search(request)
        finally:
            cache.close()
    finally:
        store.close()
        catalog.close()
