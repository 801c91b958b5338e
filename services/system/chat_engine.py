"""The one factory of the chat engine wired to a running system (the CLI, the web app, MCP, the learner)."""

from __future__ import annotations

from services.catalog import Catalog
from services.chat.engine import ChatEngine, SearchFn
from services.chat.websearch import WebSearch, make_web_search
from services.config import Settings
from services.llm.client import Generator
from services.system.client import SystemClient


def build_chat_engine(
    settings: Settings,
    catalog: Catalog | None = None,
    *,
    client: SystemClient | None = None,
    generator: Generator | None = None,
    web_search: WebSearch | None = None,
    search: SearchFn | None = None,
) -> ChatEngine:
    """A chat engine that searches through the indexer and generates through ``generator`` (default: the
    mlx worker's client; the learner passes its paced one) and searches with ``search`` (default: the
    indexer's; the learner narrows it to the user's files). Built once per process, without looking at
    the system: a caller asks ``SystemClient.ensure_running`` before each question."""
    client = client or SystemClient(settings)
    catalog = catalog or Catalog(settings.catalog_path)
    web = web_search or make_web_search(settings)
    # The budget comes from the running worker (its settings, its measured speed), not from this process.
    # Quoted answers score their sentences with the indexer's embedding model (it holds the only copy).
    generator = generator or client.generation
    return ChatEngine(settings, search or client.search, generator, web, catalog, score=client.score_sentences)
