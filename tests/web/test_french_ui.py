"""The French UI speaks French: technical names (tasks, exceptions) only behind « détails »; errors wrap.

Issue #26, point 7."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest
from litestar.testing import TestClient

from services.catalog.memory_models import Fact, FactKind, FactSource, FactStatus
from services.catalog.models import Provenance, Turn
from services.config import Settings
from services.memory.recall import statement_fact
from services.system.history import HISTORY_KEY, TaskRecord
from tests.support.web_app import html
from web.app import create_app
from web.dependencies import WebServices

NOW = datetime(2026, 12, 1, 10, 0).astimezone()
MODEL_ERROR = "GenerationError: pas de réponse du modèle en 300 s"
LONG_ERROR = "OSError: " + "x" * 400  # one unbroken word: it must wrap, not widen the page
ENGLISH = ("indexed", "preference", "confirmed", "pending", "habit", "GenerationError", "OSError")
TASKS = ("sync_batch", "apply_entities", "learn_tick")
WORKERS = ("extractor", "extract")  # a process and a queue of /admin
EVIDENCE = ("dense", "title", "coverage", "agreement", "margin", "names", "dense_lead", "title_lead")
DECIMAL_POINT = re.compile(r"\d\.\d")  # « 0.87 »: a French number has a comma
CSS = Path(__file__).parents[2] / "web" / "static" / "app.css"


class VisibleText(HTMLParser):
    """The text a person reads without opening a « détails »: outside <details>, <script>, <style> and tags."""

    def __init__(self) -> None:
        super().__init__()
        self.hidden = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hidden += tag in ("details", "script", "style")

    def handle_endtag(self, tag: str) -> None:
        self.hidden -= tag in ("details", "script", "style")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def visible(page: str) -> str:
    reader = VisibleText()
    reader.feed(page)
    return " ".join(reader.parts)


def readable(page: str) -> str:
    """All the text a person can read, « détails » opened (attributes, scripts and styles left out)."""
    return " ".join(re.sub(r"<script.*?</script>|<style.*?</style>|<[^>]*>", " ", page, flags=re.S).split())


def english_in(page: str, words: tuple[str, ...]) -> list[str]:
    text = visible(page)
    return [word for word in words if re.search(rf"\b{word}\b", text)]


def wrapping_errors(page: str) -> list[str]:
    """The errors shown, each in an element of class ``error-text`` (which the stylesheet wraps)."""
    return re.findall(r'<span class="error-text">([^<]*)</span>', page)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[tuple[WebServices, TestClient]]:
    root = tmp_path_factory.mktemp("french-ui")
    (root / "vault").mkdir()
    site = WebServices.build(Settings(vault=root / "vault", data_dir=root / "data", redis_url=redis_url))
    site.clock = lambda: NOW
    site.client.redis.delete(HISTORY_KEY)
    with TestClient(create_app(site.settings, site)) as client:
        yield site, client
    site.client.redis.delete(HISTORY_KEY)


def _consolidated(predicate: str, value: str, status: FactStatus) -> Fact:
    return statement_fact("x", NOW, "").model_copy(
        update={
            "predicate": predicate,
            "value": value,
            "kind": FactKind.HABIT,
            "status": status,
            "source": FactSource.CONSOLIDATION,
            "source_ref": "Santé/Suivi.md",
        }
    )


def test_the_memory_page_is_french_and_its_error_wraps(site: tuple[WebServices, TestClient]) -> None:
    web, client = site
    web.catalog.insert_fact(statement_fact("je suis végétarien", NOW, "t1"))
    web.catalog.insert_fact(_consolidated("traitement", "magnésium le soir", FactStatus.PENDING))
    run = web.catalog.start_run("memory", NOW)
    web.catalog.finish_run(run, MODEL_ERROR + " " + "y" * 300, NOW)

    page = html(client, "/memory")

    assert "Tu es végétarien" in page and "suis :" not in page  # not « moi — suis : végétarien »
    assert "préférence" in page and "confirmé" in page and "à valider" in page and "habitude" in page
    assert english_in(page, ENGLISH) == []
    assert MODEL_ERROR in page  # the technical text stays, behind « détails »
    [error] = wrapping_errors(page)
    assert error.startswith("pas de réponse du modèle en 300 s")


def test_the_dashboard_names_tasks_and_errors_in_french(site: tuple[WebServices, TestClient]) -> None:
    web, client = site
    for i, (name, queue) in enumerate(zip(TASKS, ("index", "index", "learn"), strict=True)):
        error = (MODEL_ERROR, LONG_ERROR, None)[i]
        status = "error" if error else "complete"
        record = TaskRecord(id=f"t{i}", queue=queue, name=name, args=[], status=status, error=error, at=time.time())
        web.client.history.record(record)
    web.client.queues.apply_entities("Accueil.md")  # waiting in its queue: a chip with its French name
    try:
        page = html(client, "/admin/live")
    finally:
        web.client.queues.index.flush()

    assert english_in(page, ENGLISH + TASKS + WORKERS) == []
    assert DECIMAL_POINT.findall(readable(page)) == []
    assert all(name in page for name in TASKS)  # still there for whoever opens « détails »
    shown = visible(page)
    assert "indexation d'un lot de notes" in shown and "cycle d'apprentissage" in shown
    assert "entités ajoutées à l'index" in shown
    errors = wrapping_errors(page)
    assert "pas de réponse du modèle en 300 s" in errors and "erreur technique (voir les détails)" in errors


def test_the_note_page_badge_is_french(client: TestClient) -> None:
    page = html(client, "/notes/Accueil.md")
    assert "indexée" in page and english_in(page, ("indexed",)) == []


def test_a_failed_chat_question_names_no_exception() -> None:
    """The web chat showed « La question n'a pas abouti (ValueError) »."""
    from web.chat_runs import failure_message

    message = failure_message(ValueError("day is out of range for month"))
    assert (
        "ValueError" not in message
        and "erreur interne" in message
        and "délai dépassé" in failure_message(TimeoutError())
    )


def test_error_text_wraps_in_the_stylesheet() -> None:
    css = CSS.read_text(encoding="utf-8")
    rule = next(line for line in css.splitlines() if line.startswith(".error-text,"))
    assert "overflow-wrap: anywhere" in rule


def test_why_these_sources_names_its_evidence_in_french(site: tuple[WebServices, TestClient]) -> None:
    """« pourquoi ces sources ? » showed ``dense 0.87 · dense_lead 0.12``: raw keys and decimal points."""
    web, client = site
    thread = web.catalog.create_thread("Miel")
    evidence = dict(zip(EVIDENCE, (0.87, 0.61, 0.5, 0.75, 0.2, 1.0, 0.12, 0.05), strict=True))
    grounding = {"supported": True, "outcome": "answer", "confidence": 0.83, "answer_from": 0.5}
    grounding |= {"nearness": 0.9, "near_from": 0.25, "evidence": evidence, "main_note": "Ruches.md"}
    turn = Turn(thread_id=thread, question="Combien de miel ?", answer="Quinze kilogrammes.", sources=[],
                provenance=Provenance.VAULT, created_at=NOW, grounding=grounding)  # fmt: skip
    web.catalog.add_turn(turn)

    shown = readable(html(client, f"/?thread={thread}"))

    assert "proximité du meilleur passage 0,87" in shown and "mots rares couverts 0,50" in shown
    assert [word for word in EVIDENCE if re.search(rf"\b{word}\b", shown)] == []
    assert DECIMAL_POINT.findall(shown) == []


def test_the_graph_density_has_a_decimal_comma(client: TestClient) -> None:
    shown = readable(html(client, "/graph"))
    assert re.search(r"densité \d,\d{4}", shown) and DECIMAL_POINT.findall(shown) == []


def test_a_document_message_is_translated_only_at_display() -> None:
    from web.filters import catalog_message

    assert catalog_message("low-confidence OCR: pages 1, 4") == "lecture OCR incertaine : pages 1, 4"
    assert catalog_message("unreadable document: OSError: truncated").startswith("document illisible : ")
    assert catalog_message("un message inconnu") == "un message inconnu"  # one not known shows as it is
