"""What the pages are given, by name (Litestar's dependency injection): each handler declares the ones it uses.

``settings``, ``client`` (``SystemClient``), ``clock``, ``catalog`` or only the table group a page needs
(``notes``, ``links``, ``runs``, ``conversations``, ``memory``), ``graph`` (``GraphCache``), ``note_titles``
(``NoteTitlesCache``), ``renderer`` (a ``MarkdownRenderer`` per request), ``web_search`` and ``chat_runs``
(``web.chat_wiring``).

The web process never opens Qdrant or Redis data structures itself: it reads the catalog (SQLite, safe
from any process) and the vault (read-only), and goes through ``SystemClient`` for everything the running
system does (search, status, reindexing, task history and retries, the model).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, TypeAlias

from litestar.di import NamedDependency, Provide

from services import vault
from services.catalog import Catalog, LinksTable
from services.catalog.graph_cache import GraphCache, served_graph
from services.config import Settings
from services.system import SystemClient
from services.vault.reader import MarkdownDoc
from web.chat_wiring import ChatWiring
from web.note_titles import NoteTitlesCache
from web.rendering import CatalogLinks, MarkdownRenderer
from web.urls import WebUrls

log = logging.getLogger(__name__)

Clock: TypeAlias = Callable[[], datetime]


def local_now() -> datetime:
    return datetime.now().astimezone()


@dataclass
class WebServices:
    """The long-lived objects of one web app: built by ``create_app`` (or by a test, with its own clock),
    closed on shutdown. No page takes this object: ``dependencies`` hands each part out by its name."""

    settings: Settings
    catalog: Catalog
    client: SystemClient
    clock: Clock = local_now  # read at each request: a test may set its own at any time
    graph: GraphCache = field(init=False)
    note_titles: NoteTitlesCache = field(init=False)

    def __post_init__(self) -> None:
        self.graph = served_graph(self.catalog, self.settings.data_dir)
        self.note_titles = NoteTitlesCache(self.catalog.notes)

    def warm(self) -> None:
        """The graph (read or built beside) and the note picker's list, before anyone opens their pages: the
        picker's first list took 0.9 s at 50,000 notes, its first view after a start waited for it (#34)."""
        self.graph.warm()
        try:
            self.note_titles.get()
        except Exception:  # the catalog closed by a stop meanwhile, or unreadable: the first view builds it
            log.warning("the note picker's list was not built ahead", exc_info=True)

    @classmethod
    def build(cls, settings: Settings) -> WebServices:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        return cls(settings=settings, catalog=Catalog(settings.catalog_path), client=SystemClient(settings))

    def close(self) -> None:
        self.catalog.close()


def dependencies(services: WebServices) -> dict[str, Provide]:
    """The app's dependencies, by the names the handlers' parameters use."""
    settings, catalog = services.settings, services.catalog
    chat = ChatWiring(settings, catalog, services.client)  # its web search and runs are built on first use
    return {
        "settings": _given(settings),
        "client": _given(services.client),
        "clock": Provide(lambda: services.clock, sync_to_thread=False),
        "catalog": _given(catalog),
        "notes": _given(catalog.notes),
        "links": _given(catalog.links),
        "runs": _given(catalog.runs),
        "conversations": _given(catalog.conversations),
        "memory": _given(catalog.memory),
        "graph": _given(services.graph),
        "note_titles": _given(services.note_titles),
        "renderer": Provide(note_renderer, sync_to_thread=False),
        "web_search": Provide(lambda: chat.web_search, sync_to_thread=False),
        "chat_runs": Provide(lambda: chat.chat, sync_to_thread=False),
    }


def note_renderer(settings: NamedDependency[Settings], links: NamedDependency[LinksTable]) -> MarkdownRenderer:
    """A renderer for one request (it memoises the links of the notes it renders)."""
    resolve = CatalogLinks(links.outlinks, settings.vault, settings.exclude, named=links.resolve_link)
    return MarkdownRenderer(WebUrls(), resolve, partial(read_body, settings))


def read_body(settings: Settings, path: str) -> MarkdownDoc | None:
    """The body of the note an embed shows; None when it cannot be read."""
    try:
        return vault.read_note(settings.vault, path, settings.max_file_bytes).markdown
    except (OSError, vault.NoteSkipped, vault.PathOutsideVault):
        return None


def _given(value: Any) -> Provide:
    """A dependency that is always the same object."""
    return Provide(lambda: value, use_cache=True, sync_to_thread=False)
