"""A click on a cited note teaches the search (issue #32): ``POST /sources/mark`` and the marks on ``/memory``."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from litestar.testing import TestClient

from services.catalog import Catalog
from services.catalog.models import Provenance, Source, Turn, Verdict
from tests.support.web_app import html

TATIN = "Cuisine/Tarte tatin.md"
QUESTION = "Quel dessert aux pommes caramélisées ?"


@pytest.fixture
def turn(web_catalog: Catalog) -> Iterator[int]:
    thread = web_catalog.create_thread("Dessert")
    sources = [
        Source(n=1, title="Tarte tatin", path=TATIN, primary=True),
        Source(n=2, title="Un site", url="https://example.org/tatin"),
    ]
    turn_id = web_catalog.add_turn(
        Turn(
            thread_id=thread,
            question=QUESTION,
            answer="Une tarte tatin [1].",
            sources=sources,
            provenance=Provenance.VAULT,
            created_at=datetime.now(UTC),
        )
    )
    yield turn_id
    web_catalog.forget_marks()


def test_a_mark_needs_the_csrf_token(client: TestClient, turn: int, web_catalog: Catalog) -> None:
    form = {"turn": str(turn), "path": TATIN, "verdict": "yes"}
    assert client.post("/sources/mark", data=form).status_code == 403
    assert web_catalog.list_marks() == []


def test_a_mark_records_the_turns_question_against_its_source(
    client: TestClient, csrf: dict[str, str], turn: int, web_catalog: Catalog
) -> None:
    response = client.post("/sources/mark", data={"turn": str(turn), "path": TATIN, "verdict": "yes"}, headers=csrf)
    assert response.status_code == 200 and "c'était ça" in response.text
    [mark] = web_catalog.list_marks()
    assert (mark.question, mark.path, mark.verdict) == (QUESTION, TATIN, Verdict.YES)


def test_only_a_vault_source_of_the_turn_can_be_marked(
    client: TestClient, csrf: dict[str, str], turn: int, web_catalog: Catalog
) -> None:
    for form in (
        {"turn": str(turn), "path": "Cuisine/Ratatouille.md", "verdict": "opened"},  # not cited by that answer
        {"turn": str(turn + 1000), "path": TATIN, "verdict": "opened"},  # no such turn
    ):
        assert client.post("/sources/mark", data=form, headers=csrf).status_code == 404
    assert (
        client.post(
            "/sources/mark", data={"turn": str(turn), "path": TATIN, "verdict": "bof"}, headers=csrf
        ).status_code
        == 400
    )
    assert web_catalog.list_marks() == []


def test_the_answer_offers_the_marks_beside_vault_sources_only(
    client: TestClient, turn: int, web_catalog: Catalog
) -> None:
    thread = web_catalog.list_threads("Dessert")[0].id
    page = html(client, f"/?thread={thread}").replace("&#39;", "'")
    assert f'data-turn="{turn}"' in page  # the cited note's link records « opened » (web/static/app.js)
    assert page.count(">c'était ça</button>") == 1 and page.count(">pas ça</button>") == 1  # not beside the web one


def test_memory_lists_the_marks_and_forgets_them(
    client: TestClient, csrf: dict[str, str], turn: int, web_catalog: Catalog
) -> None:
    first = web_catalog.mark_turn_source(turn, TATIN, Verdict.OPENED)
    web_catalog.mark_turn_source(turn, TATIN, Verdict.NO)
    page = html(client, "/memory")
    assert "Ce que tes clics m&#39;ont appris" in page or "Ce que tes clics m'ont appris" in page
    assert QUESTION in page and f"/memory/marks/{first}/forget" in page
    assert client.post(f"/memory/marks/{first}/forget", headers=csrf).status_code == 200
    assert [m.verdict for m in web_catalog.list_marks()] == [Verdict.NO]
    assert client.post("/memory/marks/forget", headers=csrf).status_code == 200
    assert web_catalog.list_marks() == []
    assert "Rien pour l'instant : ouvre une note citée" in html(client, "/memory").replace("&#39;", "'")
