"""The « Cartes » page (issue #36): cards made from the note viewer, reviewed one at a time, graded, undone."""

from __future__ import annotations

import re
from html import unescape

from litestar.testing import TestClient

from services.catalog import Catalog
from tests.support.web_app import html

NOTE = "Lexique.md"


def test_cards_are_made_from_a_note_then_reviewed_graded_and_undone(
    client: TestClient, csrf: dict[str, str], web_catalog: Catalog
) -> None:
    assert 'href="/cards"' in html(client, "/") and "Faire des cartes" in html(client, "/notes/Lexique.md")
    made = client.post("/cards/make", data={"path": NOTE}, headers=csrf)
    assert made.status_code == 200 and "12 carte(s) ajoutée(s) à obsirag/cards/" in made.text
    page = html(client, f"/cards?note={NOTE}")
    assert "12 à revoir maintenant" in page and "Montrer la réponse" in page
    card = re.search(r'data-card="(\w+)"', page).group(1)  # type: ignore[union-attr]
    shown = unescape(client.get(f"/cards/answer/{card}").text)
    assert web_catalog.card(card).answer in shown and "3 · Bien" in shown  # type: ignore[union-attr]
    graded = client.post(f"/cards/grade/{card}/3?note={NOTE}", headers=csrf).text
    assert f'data-card="{card}"' not in graded  # the next card
    assert len(web_catalog.cards(due_before=web_catalog.card(card).due, source=NOTE)) == 12  # type: ignore[union-attr]
    undone = client.post(f"/cards/undo?note={NOTE}", headers=csrf).text
    assert f'data-card="{card}"' in undone  # due again, first
    tag = web_catalog.get_note(NOTE).tags[0]  # type: ignore[union-attr]
    assert "12 à revoir maintenant" in html(client, f"/cards?tag={tag}")  # by the note's tag
    assert "0 à revoir maintenant" in html(client, "/cards?tag=aucun-tag-de-ce-nom")
    assert re.search(r'id="cards-due"><a href="/cards">\d+ aujourd', html(client, "/admin/live"))  # the dashboard
    assert client.post("/cards/make", data={"path": NOTE}).status_code == 403  # CSRF
    assert client.post("/cards/make", data={"path": "Nulle part.md"}, headers=csrf).status_code == 404
