"""Wiring of the chat engine to a running system (used by the CLI and the web app)."""

from __future__ import annotations

from collections.abc import Iterator

from services.catalog import Catalog
from services.chat import ChatEngine
from services.config import Settings
from services.llm.client import GenerationClient
from services.llm.models import GenerationRequest, StreamEvent
from services.search import SearchRequest, SearchResponse
from services.websearch import make_web_search
from workers.client import SystemClient


class SystemNotRunning(RuntimeError):
    pass


def build_chat_engine(settings: Settings, catalog: Catalog | None = None) -> ChatEngine:
    """A chat engine that searches through the indexer and generates through the mlx worker."""
    client = SystemClient(settings)
    if not client.indexer_alive():
        raise SystemNotRunning("ObsiRAG is not running: start it with `obsirag up` (or `make run`)")
    generation = GenerationClient(settings)

    def search(request: SearchRequest) -> SearchResponse:
        return client.search(request)

    def stream(request: GenerationRequest) -> Iterator[StreamEvent]:
        return generation.stream(generation.submit(request, watched=True), timeout=settings.llm_timeout_seconds)

    catalog = catalog or Catalog(settings.catalog_path)
    # The budget comes from the running worker (its settings, its measured speed), not from this process.
    return ChatEngine(settings, search, stream, make_web_search(settings), catalog, worker=generation.state)
