"""Every page of the web app against the real app, a real catalog and a copy of the sample vault."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from html import unescape
from pathlib import Path

import pytest
from litestar.testing import TestClient

from services.catalog import Catalog
from services.catalog.models import Provenance, Source, Turn
from services.chat.prompts import NOT_IN_VAULT
from services.config import Settings
from tests.support.web_app import html
from web.app import create_app

ATLAS = "/notes/Projets/Projet%20Atlas.md"


def test_note_viewer_renders_obsidian_markdown(client: TestClient) -> None:
    page = html(client, ATLAS)
    assert '<blockquote class="callout callout-note"' in page and "Pourquoi 18 mois ?" in page
    assert "<table>" in page and 'class="contains-task-list"' in page and 'type="checkbox"' in page
    assert '<pre class="mermaid">flowchart LR' in page
    assert '<img class="embed-image" src="/vault-files/Attachments/schema-atlas.png"' in page
    # [[Marc Lefèvre|Marc]]: the alias is shown, the link goes to the note.
    assert re.search(r'href="/notes/Personnes/Marc%20Lef%C3%A8vre.md"[^>]*>Marc</a>', page)
    assert 'id="durée-et-planning"' in page  # heading anchors for [[Note#Heading]] links
    assert "obsidian://open?vault=vault&amp;file=Projets%2FProjet%20Atlas" in page
    assert "#projet/atlas" in page and "Propriétés" in page and "en cours" in page  # tags and frontmatter
    assert "^risque-donnees" not in page  # block ids are Obsidian markup, not text


def test_heading_links_embeds_and_backlinks(client: TestClient) -> None:
    page = html(client, "/notes/R%C3%A9unions/2026-11-12%20Revue%20technique%20Atlas.md")
    # ![[Projet Atlas#Objectifs]] embeds that section only, titled with a link to its heading.
    embed = page[page.index('<div class="embed">') :]
    assert 'href="/notes/Projets/Projet%20Atlas.md#objectifs"' in embed
    assert "Former 40 agents" in embed and "Durée et planning" not in embed
    atlas = html(client, ATLAS)
    backlinks = atlas[atlas.index('class="backlinks"') :]
    assert 'href="/notes/R%C3%A9unions/2026-11-12%20Revue%20technique%20Atlas.md"' in backlinks
    # [[Note]] embeds a whole note (Menus de la semaine embeds the Ratatouille recipe).
    assert "embed-title" in html(client, "/notes/Cuisine/Menus%20de%20la%20semaine.md")


def test_note_picker_is_alphabetical_and_shows_paths_of_homonyms(client: TestClient) -> None:
    page = html(client, "/notes")
    titles = re.findall(r'<li><a href="/notes/[^"]+" data-path="[^"]+">([^<]+)</a>', page)
    folded = [t.casefold() for t in titles]
    assert len(titles) >= 40 and folded.index("accueil") < folded.index("tarte tatin de ma grand-mère")
    assert '<span class="path">Archives/Accueil.md</span>' in page and '<span class="path">Accueil.md</span>' in page
    filtered = html(client, "/notes/list?q=levain")
    assert "Pain au levain" in filtered and "Ratatouille" not in filtered
    by_initial = html(client, "/notes?letter=R")
    assert "Ratatouille" in by_initial and ">Accueil<" not in by_initial


def test_graph_filters_metrics_top_and_export(client: TestClient, web_settings: Settings) -> None:
    page = html(client, "/graph")
    data = json.loads(unescape(re.search(r"data-graph='([^']*)'", page)[1]))
    ids = [node[0] for node in data["nodes"]]
    assert len(ids) == int(re.search(r'id="metric-nodes">(\d+)<', page)[1])
    atlas, docker = ids.index("Projets/Projet Atlas.md"), ids.index("Tech/Docker Compose cheatsheet.md")
    assert [atlas, docker, 1] in data["edges"] or [docker, atlas, 1] in data["edges"]  # the synapse, marked 1
    assert "obsirag/synapses/Atlas et Docker.md" not in ids  # a synapse is an edge, not a node
    top = page[page.index('class="top-notes"') : page.index("</ol>", page.index('class="top-notes"'))]
    assert top.count("<li>") == 5 and "Accueil" in top
    assert '<option value="synthesis">synthèse</option>' in page  # the type filter speaks French
    labelled = {node[0] for node in data["nodes"] if node[5] == 1}  # the hubs are named on the drawing
    assert "Projets/Projet Atlas.md" in labelled and set(re.findall(r'data-path="([^"]+)"', top)) <= labelled
    partial = client.get("/graph?folder=Cuisine", headers={"hx-request": "true", "hx-target": "graph-panel"}).text
    assert partial.startswith('<div id="graph-panel"') and 'id="metric-matched">5<' in partial
    exported = json.loads((web_settings.data_dir / "graph" / "knowledge_graph.json").read_text(encoding="utf-8"))
    own = int(re.search(r'id="own-hidden">(\d+) ', page)[1])  # ObsiRAG's conversation: exported, not drawn
    assert len(exported["nodes"]) == len(ids) + own and own == 1 and exported["edges"]


def test_conversations_list_search_rename_delete_and_export(
    client: TestClient, web_catalog: Catalog, web_settings: Settings, csrf: dict[str, str]
) -> None:
    thread_id = web_catalog.create_thread("Levain et fermentation")
    turn = Turn(
        thread_id=thread_id,
        question="Comment nourrir mon levain ?",
        answer="Farine et eau, à parts égales [1].",
        sources=[Source(n=1, title="Pain au levain", path="Cuisine/Pain au levain.md", primary=True)],
        provenance=Provenance.VAULT,
        backend="mlx",
        model="smollm2",
        created_at=datetime.now(UTC),
    )
    web_catalog.add_turn(turn)
    assert "Levain et fermentation" in html(client, "/conversations")
    assert "Levain et fermentation" in client.get("/conversations/list?q=parts égales").text
    assert "Levain et fermentation" not in client.get("/conversations/list?q=zzz introuvable").text
    reopened = html(client, f"/?thread={thread_id}")
    assert "Comment nourrir mon levain ?" in reopened and "via MLX" in reopened and ">coffre<" in reopened
    assert 'href="/notes/Cuisine/Pain%20au%20levain.md"' in reopened  # the main note, above the sources
    renamed = client.post(f"/conversations/{thread_id}/rename", data={"title": "Mon levain"}, headers=csrf)
    assert renamed.status_code == 200 and "Mon levain" in renamed.text
    saved = client.post(f"/conversations/{thread_id}/export", headers=csrf)
    assert saved.status_code == 200 and "obsirag/conversations/" in saved.text
    path = re.search(r">(obsirag/conversations/[^<]+\.md)<", saved.text)[1]
    assert "Comment nourrir mon levain ?" in (web_settings.vault / path).read_text(encoding="utf-8")
    assert client.post(f"/conversations/{thread_id}/delete", headers=csrf).status_code == 200
    assert web_catalog.get_thread(thread_id) is None


def test_artifacts_show_saved_conversations_with_question_answer_and_sources(client: TestClient) -> None:
    page = html(client, "/artifacts?kind=conversation")
    assert "Quels sont les objectifs du projet Atlas ?" in page and "Publier une carte" in page
    assert ">Coffre<" in page and 'href="/notes/Projets/Projet%20Atlas.md">Projet Atlas</a>' in page
    assert "Atlas et Docker" in html(client, "/artifacts?kind=synapse")


def test_dashboard_renders_while_the_system_is_down(client: TestClient) -> None:
    page = html(client, "/admin")
    assert "ObsiRAG ne tourne pas" in page and "Couverture de l'index" in page
    assert 'hx-trigger="every 2s"' in page
    files = client.get("/admin/files?q=levain").text
    assert "Cuisine/Pain au levain.md" in files and "status-indexed" in files


def test_chat_streams_an_error_when_the_system_is_down(client: TestClient, csrf: dict[str, str]) -> None:
    asked = client.post("/chat/ask", data={"question": "Où en est Atlas ?", "use_web": "1"}, headers=csrf)
    assert asked.status_code == 200 and "Où en est Atlas ?" in asked.text
    run_id = re.search(r'sse-connect="/chat/stream/([0-9a-f]+)"', asked.text)[1]
    thread_id = re.search(r'id="thread-id" value="([0-9a-f]+)" hx-swap-oob', asked.text)[1]
    assert asked.headers["hx-replace-url"] == f"/?thread={thread_id}"
    stream = client.get(f"/chat/stream/{run_id}")
    assert stream.headers["content-type"].startswith("text/event-stream")
    assert "event: done" in stream.text and "ObsiRAG ne tourne pas" in stream.text and "event: end" in stream.text
    again = client.get(f"/chat/stream/{run_id}").text  # a reconnect gets an end, not a second run
    assert "plus disponible" in again and "event: end" in again
    assert 'class="réessayer"' in stream.text  # the failed question can be asked again from where it failed
    reopened = html(client, f"/?thread={thread_id}")  # and it stays in its thread, with its error
    assert "Où en est Atlas ?" in reopened and "ObsiRAG ne tourne pas" in reopened and ">réessayer<" in reopened


def test_a_capped_or_uncited_answer_says_so(client: TestClient, web_catalog: Catalog) -> None:
    thread_id = web_catalog.create_thread("Atlas")
    source = Source(n=1, title="Projet Atlas", path="Projets/Projet Atlas.md", primary=True)
    for answer, finish in (("Le projet Atlas vise à publier une carte", "length"), ("Une carte [1].", "stop")):
        turn = Turn(
            thread_id=thread_id,
            question="Quels buts ?",
            answer=answer,
            sources=[source],
            provenance=Provenance.VAULT,
            finish_reason=finish,
            created_at=datetime.now(UTC),
        )
        web_catalog.add_turn(turn)
    page = html(client, f"/?thread={thread_id}")
    capped, cited = page.split('<article class="turn">')[1:3]
    assert re.search(r'carte</p>\s*<p class="truncated-mark">\(réponse tronquée\)</p>', capped)  # where it stops
    assert ">continuer<" in capped
    assert "coffre (sans citation)" in capped  # it cites no excerpt [n]
    assert "tronquée" not in cited and "continuer" not in cited and "sans citation" not in cited


def test_the_web_opt_in_is_unticked_and_a_failed_web_search_is_said(client: TestClient, web_catalog: Catalog) -> None:
    page = html(client, "/")
    opt_in = page[page.index('id="web-opt-in"') : page.index("</label>", page.index('id="web-opt-in"'))]
    assert "checked" not in opt_in and "jamais le texte de tes notes" in opt_in and "DuckDuckGo" in opt_in
    thread_id = web_catalog.create_thread("Capitale du Pérou")
    turn = Turn(
        thread_id=thread_id,
        question="quelle est la capitale du Pérou ?",
        answer=NOT_IN_VAULT["fr"],
        provenance=Provenance.NONE,
        web="failed",
        created_at=datetime.now(UTC),
    )
    web_catalog.add_turn(turn)
    reopened = html(client, f"/?thread={thread_id}")
    assert "la recherche web a échoué" in reopened and "Error" not in reopened


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/conversations",
        "/notes",
        "/notes/Projets/Projet%20Atlas.md",
        "/graph",
        "/artifacts",
        "/admin",
        "/memory",
        "/reminders",
        "/reminders/badge",
        "/admin/live",
        "/static/app.js",
    ],
)
def test_head_answers_wherever_get_does(client: TestClient, url: str) -> None:
    head, got = client.head(url), client.get(url)
    assert head.status_code == got.status_code == 200 and head.content == b""
    if not url.startswith("/static/"):  # Litestar's static files answer HEAD without a content type
        assert head.headers["content-type"] == got.headers["content-type"]


def test_an_empty_index_says_what_to_do_next(tmp_path: Path) -> None:
    """Issue #38.4: the first visit, before anything is indexed, is not a bare « Aucune note ne correspond »."""
    (tmp_path / "vault").mkdir()
    settings = Settings(vault=tmp_path / "vault", data_dir=tmp_path / "data", redis_url=f"unix://{tmp_path}/r.sock")
    with TestClient(create_app(settings)) as client:
        page = client.get("/notes").text
        assert "Aucune note indexée pour l'instant" in page and 'href="/admin"' in page
        assert "Aucune note ne correspond." in client.get("/notes/list?q=levain").text
