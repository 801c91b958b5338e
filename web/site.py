"""The services one web app uses, built once and injected into every page as ``site``.

The web process never opens Qdrant or Redis data structures itself: it reads the catalog (SQLite, safe
from any process) and the vault (read-only), and goes through ``SystemClient`` for everything the running
system does (search, status, reindexing, task history and retries, the model).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property, partial
from typing import Any, TypeAlias, TypeVar

from litestar.di import NamedDependency

from services import vault
from services.catalog import Catalog
from services.catalog.graph import GraphCache
from services.catalog.models import Provenance, Turn
from services.chat.engine import ChatEngine
from services.chat.websearch import WebSearch, make_web_search
from services.config import Settings
from services.system import SystemClient, build_chat_engine
from services.vault.reader import MarkdownDoc
from web.chat_runs import ChatRun, ChatRuns
from web.rendering import CatalogLinks, MarkdownRenderer
from web.urls import WebUrls

T = TypeVar("T")
NOT_RUNNING = "ObsiRAG ne tourne pas : lancez `obsirag up` (ou `make run`)."


@dataclass
class Site:
    settings: Settings
    catalog: Catalog
    client: SystemClient
    extras: dict[str, Any] = field(default_factory=dict)
    clock: Callable[[], datetime] = field(default=lambda: datetime.now().astimezone())  # tests pass their own

    @classmethod
    def build(cls, settings: Settings) -> Site:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        return cls(settings=settings, catalog=Catalog(settings.catalog_path), client=SystemClient(settings))

    @cached_property
    def graph(self) -> GraphCache:
        return GraphCache(self.catalog, self.settings.data_dir / "graph" / "knowledge_graph.json")

    @cached_property
    def web_search(self) -> WebSearch:
        return make_web_search(self.settings)

    @cached_property
    def chat(self) -> ChatRuns:
        ensure_running = partial(self.client.ensure_running, "fr", NOT_RUNNING)
        return ChatRuns(self.chat_engine, ensure_running, self.record_failure)

    def record_failure(self, run: ChatRun, message: str) -> None:
        """A question that failed before its answer stays in its thread, with what the user was told."""
        turn = Turn(
            thread_id=run.thread_id, question=run.question, answer="", provenance=Provenance.NONE,
            error=message, created_at=datetime.now(UTC),
        )  # fmt: skip
        self.catalog.add_turn(turn)

    @cached_property
    def chat_engine(self) -> ChatEngine:
        """The process's one engine: searches through the indexer, generates through the mlx worker."""
        return build_chat_engine(self.settings, self.catalog, client=self.client, web_search=self.web_search)

    def cached(self, name: str, build: Callable[[], T]) -> T:
        """``build()``'s value, kept until the catalog changes (a note indexed, removed, re-linked)."""
        fingerprint = self.catalog.fingerprint()
        stamp, value = self.extras.get(name, (None, None))
        if stamp != fingerprint:
            value = build()
            self.extras[name] = (fingerprint, value)
        return value  # type: ignore[return-value]

    def renderer(self) -> MarkdownRenderer:
        """A renderer for one request (it memoises the links of the notes it renders)."""
        links = CatalogLinks(self.catalog.outlinks, self.settings.vault, self.settings.exclude)
        return MarkdownRenderer(WebUrls(), links, self.read_body)

    def read_body(self, path: str) -> MarkdownDoc | None:
        try:
            return vault.read_note(self.settings.vault, path, self.settings.max_file_bytes).markdown
        except (OSError, vault.NoteSkipped, vault.PathOutsideVault):
            return None

    def close(self) -> None:
        self.catalog.close()


SiteDep: TypeAlias = NamedDependency[Site]  # handlers take ``site: SiteDep``
