"""One rule for what the user excluded (issue #41.6): an excluded note and an excluded PDF, indexed before the
exclusion was set or never, are shown by no page, served by no route and read by no MCP tool."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from litestar.testing import TestClient

from services.catalog import Catalog
from services.config import Settings
from services.indexing.pipeline import IndexPipeline
from services.indexing.reconcile import changed_paths
from services.mcp.notes import NoteError, NoteReader
from services.retrieval.store import EdgeStore
from services.vault import may_read
from web.app import create_app

SECRET = "Privé/Secret.md"
STATEMENT = "Privé/Relevé.pdf"
LOOSE = "Brouillon.secret.md"
PAGES = ["/", "/notes", "/notes/picker?q=Secret", "/graph", "/graph/data", "/admin", "/admin/live", "/memory",
         "/reminders", "/conversations", "/artifacts"]  # fmt: skip


@pytest.fixture(scope="module")
def excluded(tmp_path_factory: pytest.TempPathFactory, documents: dict[str, Path], embedder) -> Iterator[Settings]:
    root = tmp_path_factory.mktemp("excluded")
    vault = root / "vault"
    (vault / "Privé").mkdir(parents=True)
    (vault / "Accueil.md").write_text("# Accueil\n\nVoir [[Secret]] et ![[Relevé.pdf]].\n", encoding="utf-8")
    (vault / SECRET).write_text("# Secret\n\nLe code du coffre est 4321.\n", encoding="utf-8")
    (vault / LOOSE).write_text("# Brouillon\n\nLe code du coffre est 4321.\n", encoding="utf-8")
    shutil.copy(documents["Manuel.pdf"], vault / STATEMENT)
    settings = Settings(vault=vault, data_dir=root / "data", redis_url=f"unix://{root}/no-redis.sock")
    # Indexed first, then excluded: the hard case, the catalog holds them until the next reconcile.
    pipeline = IndexPipeline(settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), embedder)
    pipeline.sync_paths(changed_paths(settings, pipeline.catalog))
    assert {SECRET, STATEMENT, LOOSE} <= {n.path for n in pipeline.catalog.list_notes()}
    pipeline.store.close()
    pipeline.catalog.close()
    yield settings.model_copy(update={"exclude": ["Privé/", "*.secret.md"]})


def reconcile(settings: Settings, embedder) -> None:
    """What the indexer's reconcile does at start with the new exclusion: it drops them from the index."""
    pipeline = IndexPipeline(settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), embedder)
    pipeline.sync_paths(changed_paths(settings, pipeline.catalog))
    assert not {SECRET, STATEMENT, LOOSE} & {n.path for n in pipeline.catalog.list_notes()}
    pipeline.store.close()
    pipeline.catalog.close()


def test_the_rule_itself() -> None:
    rules = ["Privé/", "*.secret.md", "Archives/**/*.pdf"]
    refused = [SECRET, STATEMENT, LOOSE, "Privé/Sous/Note.md", "Archives/2020/a.pdf", ".obsidian/x.json", "../x.md"]
    assert not [p for p in refused if may_read(p, rules)]
    assert all(may_read(p, rules) for p in ["Accueil.md", "Archives/2020/a.md", "Privées/Note.md", "a.png"])


def test_no_page_and_no_route_shows_or_serves_them(excluded: Settings, embedder) -> None:
    with TestClient(create_app(excluded)) as client:  # at once, while the catalog still holds them
        for url in ["/notes/" + SECRET, "/notes/" + LOOSE, "/vault-files/" + STATEMENT, "/documents/" + STATEMENT]:
            assert client.get(url).status_code == 404, url
    reconcile(excluded, embedder)
    with TestClient(create_app(excluded)) as client:
        shown = {url: client.get(url).text for url in PAGES}
    assert not [url for url, text in shown.items() if "4321" in text or "Relevé" in text or "Secret.md" in text]


def test_no_mcp_tool_reads_them(excluded: Settings, embedder) -> None:
    with Catalog(excluded.catalog_path) as catalog:
        reader = NoteReader(excluded, catalog)
        for name in (SECRET, LOOSE, STATEMENT):
            with pytest.raises(NoteError):
                reader.read(name)
            with pytest.raises(NoteError):
                reader.body(name)
    reconcile(excluded, embedder)
    with Catalog(excluded.catalog_path) as catalog:
        reader = NoteReader(excluded, catalog)
        with pytest.raises(NoteError):
            reader.read("Secret")
        listed = reader.listing(limit=100)
        changed = reader.recent_changes(3650, datetime.now(UTC))
        assert reader.read("Accueil").path == "Accueil.md"
    paths = [n.path for n in listed.notes] + [c.path for c in changed]
    assert "Accueil.md" in paths and not {SECRET, STATEMENT, LOOSE} & set(paths)
