"""An image's OCR text is cited as a screenshot wherever a source is named: the chat's sources, the quoted
answer's « — where [n] » line, the CLI; in the answer's language."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.catalog.models import Provenance, Source
from services.chat.answer import ChatAnswer
from services.chat.context import pack_context, sources_of
from services.chat.grounding import Evidence, Grounding
from services.chat.query import QueryPlan
from services.chat.quoting import quote_answer
from services.config import Settings
from services.retrieval.search import SearchResult
from workers.cli_output import ask_json, print_sources

TEXT = "Pour activer la synchronisation, ouvrez Réglages puis cochez « Synchroniser le coffre »."


def hit(path: str, ocr: str | None, page: int | None = 1) -> SearchResult:
    return SearchResult(
        path=path,
        title=path.rsplit("/", 1)[-1],
        score=1.0,
        heading="",
        snippet="",
        text=TEXT,
        chunk_index=0,
        note_type="attachment",
        page=page,
        ocr=ocr,
        ocr_confidence=91.5 if ocr else None,
    )


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(vault=tmp_path, data_dir=tmp_path / "data")


def test_a_screenshot_s_label_says_so_in_the_answer_s_language() -> None:
    shot = Source(n=1, title="Réglages.png", path="Captures/Réglages.png", page=1, screenshot=True)
    assert shot.label == shot.label_in("fr") == "capture d'écran : Réglages.png"
    assert shot.label_in("en") == "screenshot: Réglages.png"
    manual = Source(n=2, title="Manuel.pdf", path="Manuel.pdf", page=12)
    assert manual.label_in("en") == manual.label == "Manuel.pdf, p. 12"


@pytest.mark.parametrize(
    ("language", "where"), [("fr", "capture d'écran : Réglages.png"), ("en", "screenshot: Réglages.png")]
)
def test_a_quoted_screenshot_is_cited_as_one(settings: Settings, language: str, where: str) -> None:
    shot = hit("Captures/Réglages.png", "image")
    grounding = Grounding(True, 0.9, Evidence(*[0.5] * 8), [shot], shot)
    quote = quote_answer(settings, "comment activer la synchronisation ?", language, grounding, None)
    assert f"— {where} [1]" in quote.text and quote.sources[0].screenshot


def test_a_scanned_page_keeps_its_page_and_a_written_answer_s_sources_mark_the_screenshot(settings: Settings) -> None:
    results = [hit("Scan.pdf", "scan", page=3), hit("Captures/Réglages.png", "image")]
    sources = sources_of(pack_context(settings, results, None, 2000))
    assert [(s.label, s.screenshot) for s in sources] == [
        ("Scan.pdf, p. 3", False),
        ("capture d'écran : Réglages.png", True),
    ]


def test_the_cli_names_a_screenshot_source_and_ask_json_adds_a_field(capsys: pytest.CaptureFixture[str]) -> None:
    plan = QueryPlan(question="how do I sync?", retrieval_query="sync", language="en")
    shot = Source(n=1, title="Réglages.png", path="Captures/Réglages.png", page=1, screenshot=True)
    note = Source(n=2, title="Carnet", path="Carnet.md")
    answer = ChatAnswer(
        thread_id="t1", question=plan.question, answer="Open Réglages [1].", provenance=Provenance.VAULT,
        sources=[shot, note], plan=plan,
    )  # fmt: skip
    print_sources(answer)
    out = capsys.readouterr().out
    assert "[1] screenshot: Réglages.png  Captures/Réglages.png" in out and "[2] Carnet  Carnet.md" in out
    shown = ask_json(answer)["sources"]
    assert shown[0]["screenshot"] is True and "screenshot" not in shown[1]
    assert set(shown[1]) == {"path", "title", "heading", "primary"}
