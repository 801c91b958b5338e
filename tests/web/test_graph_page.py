"""The graph page leaves ObsiRAG's own files out unless its toggle shows them (#39 point 10)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import unescape

import pytest
from litestar.testing import TestClient

from services.config import Settings
from tests.conftest import copy_sample_vault
from tests.support.web_app import fill_catalog, html
from web.app import create_app

BRIEFING = "obsirag/briefings/2026-12-02.md"
CITED = ["Projet Atlas", "Ratatouille", "Marc Lefèvre", "Pain au levain", "Docker Compose cheatsheet"]
CITED += ["Accueil", "Lexique", "Idées en vrac", "Tarte tatin de ma grand-mère", "Obsidian - mon organisation"]
CITED += ["Menus de la semaine", "Inflation et taux directeurs", "Qdrant et recherche vectorielle"]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The sample vault with a day's briefing citing a dozen notes: among the five best-connected files."""
    root = tmp_path_factory.mktemp("graph-web")
    copy_sample_vault(root / "vault")
    briefing = root / "vault" / BRIEFING
    briefing.parent.mkdir(parents=True)
    links = "\n".join(f"- [[{title}]]" for title in CITED)
    briefing.write_text(f"---\ntype: briefing\n---\n# Briefing du 2 décembre\n\n{links}\n", encoding="utf-8")
    settings = Settings(vault=root / "vault", data_dir=root / "data", redis_url=f"unix://{root}/no-redis.sock")
    fill_catalog(settings).close()
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def top_paths(page: str) -> list[str]:
    top = page[page.index('class="top-notes"') : page.index("</ol>", page.index('class="top-notes"'))]
    return re.findall(r'data-path="([^"]+)"', top)


def drawn_paths(page: str) -> list[str]:
    return [node[0] for node in json.loads(unescape(re.search(r"data-graph='([^']*)'", page)[1]))["nodes"]]


def test_the_most_connected_list_holds_no_obsirag_file_by_default(client: TestClient) -> None:
    page = html(client, "/graph")
    assert len(top_paths(page)) == 5 and not [p for p in top_paths(page) if p.startswith("obsirag/")]
    assert not [p for p in drawn_paths(page) if p.startswith("obsirag/")]
    toggle = re.search(r'<input type="checkbox" name="own"[^>]*>', page)
    assert toggle and "checked" not in toggle[0] and "Fichiers d'ObsiRAG" in page  # visible, off
    assert re.search(r'id="own-hidden">\d+ fichiers? d\'ObsiRAG masqués?<', page)


def test_the_toggle_shows_obsirag_files(client: TestClient) -> None:
    page = html(client, "/graph?own=true")
    assert BRIEFING in top_paths(page) and BRIEFING in drawn_paths(page)  # third, after Accueil and Atlas
    assert 'name="own" value="true" checked' in page and 'id="own-hidden"' not in page
    partial = client.get("/graph?own=true", headers={"hx-request": "true", "hx-target": "graph-panel"}).text
    assert BRIEFING in top_paths(partial)  # what the form's htmx request gets when the box is ticked
