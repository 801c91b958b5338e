"""OCR text in the index (real Tesseract): a drawing's noise is no text, a screenshot is cited as one, and a
screenshot read with low confidence is never the main note."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from services.attachments.extract import extract_document
from services.attachments.models import PageText
from services.catalog import Catalog
from services.catalog.models import NoteStatus
from services.catalog.problems import note_problems
from services.chat.grounding import select_main_note
from services.config import Settings
from services.indexing.attachments import NO_TEXT_IMAGE
from services.indexing.pipeline import IndexPipeline
from services.indexing.reconcile import changed_paths
from services.retrieval.search import SearchEngine, SearchRequest
from services.retrieval.store import EdgeStore
from tests.conftest import SAMPLE_VAULT
from tests.support import documents as docs
from workers.cli_output import search_json

DIAGRAM = SAMPLE_VAULT / "Attachments" / "schema-atlas.png"  # boxes and lines: Tesseract reads « 1, » at 0 %
BUDGET_QUESTION = "prix de la salle louée pour la fête"


def _index(root: Path, embedder, **settings: object) -> IndexPipeline:
    """A vault of one note, a French screenshot and the sample vault's diagram, indexed once."""
    vault = root / "vault"
    (vault / "Captures").mkdir(parents=True)
    (vault / "Carnet.md").write_text("# Carnet\n\nJe note ici mes lectures sur le jardin.", encoding="utf-8")
    docs.save_png(docs.page_image(docs.PAGES[2], crop=True), vault / "Captures" / "Budget.png")
    shutil.copy(DIAGRAM, vault / "Captures" / "Schéma.png")
    config = Settings(vault=vault, data_dir=root / "data", **settings)  # type: ignore[arg-type]
    pipeline = IndexPipeline(config, EdgeStore(config.store_path), Catalog(config.catalog_path), embedder)
    pipeline.sync_paths(changed_paths(config, pipeline.catalog))
    return pipeline


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory, embedder):
    pipeline = _index(tmp_path_factory.mktemp("ocr"), embedder)
    yield pipeline
    pipeline.store.close()
    pipeline.catalog.close()


def test_real_words_are_letters_read_with_some_confidence() -> None:
    def ocr(text: str, confidence: float | None) -> bool:
        return PageText(number=1, text=text, ocr=True, confidence=confidence).readable

    assert not ocr("1,", 0.0) and not ocr("", None)
    assert not ocr("Accueil", 96.0)  # one word: a button, not text to search
    assert not ocr("ee Ee rrr iii", 12.0)  # strokes taken for letters, and OCR knows it
    assert not ocr("12 34,5 — 6/7", 91.0)  # digits and punctuation are no words
    assert ocr("Accueil Paramètres", 96.0) and ocr("Élève à l'école", 60.0)
    assert PageText(number=1, text="12").readable  # a text layer is read as written: no OCR rule


def test_the_sample_diagram_reads_as_no_text_and_a_french_screenshot_as_text(tmp_path: Path) -> None:
    settings = Settings(vault=tmp_path, data_dir=tmp_path / "data")
    diagram = extract_document(DIAGRAM, "image", settings)
    assert diagram.status == "ok" and diagram.pages[0].ocr and not diagram.readable_pages
    screenshot = docs.save_png(docs.page_image(docs.PAGES[2], crop=True), tmp_path / "Budget.png")
    assert [p.number for p in extract_document(screenshot, "image", settings).readable_pages] == [1]


def test_an_image_without_real_words_is_indexed_without_chunks_and_said_so(indexed) -> None:
    catalog = indexed.catalog
    diagram = catalog.get_note("Captures/Schéma.png")
    assert diagram.status == NoteStatus.INDEXED and diagram.chunk_count == 0 and diagram.message == NO_TEXT_IMAGE
    problem = next(p for p in note_problems(catalog.list_notes()) if p.path == "Captures/Schéma.png")
    assert "aucun texte lisible" in problem.fix
    assert catalog.get_note("Captures/Budget.png").chunk_count >= 1


def test_a_screenshot_hit_says_it_is_ocr_text_and_how_sure(indexed) -> None:
    engine = SearchEngine(indexed.store, indexed.embedder)
    response = engine.search(SearchRequest(query=BUDGET_QUESTION))
    hit = next(r for r in response.results if r.path == "Captures/Budget.png")
    assert hit.ocr == "image" and hit.screenshot and hit.ocr_confidence >= 70 and not hit.ocr_low
    assert all(r.path != "Captures/Schéma.png" for r in response.results)
    shown = next(h for h in search_json(response) if h["path"] == "Captures/Budget.png")
    assert shown["ocr"] == "image" and shown["page"] == 1
    notes = engine.search(SearchRequest(query="mes lectures sur le jardin")).results
    assert next(r for r in notes if r.path == "Carnet.md").ocr is None


def test_a_screenshot_read_with_low_confidence_is_cited_never_the_main_note(tmp_path: Path, embedder) -> None:
    strict = _index(tmp_path, embedder, ocr_min_confidence=99.9)  # the clean screenshot's ~95 % is below this floor
    try:
        response = SearchEngine(strict.store, embedder).search(SearchRequest(query=BUDGET_QUESTION))
        hit = next(r for r in response.results if r.path == "Captures/Budget.png")
        assert hit.ocr_low and strict.catalog.get_note("Captures/Budget.png").message.startswith("low-confidence OCR")
        assert select_main_note([hit]) == (None, [hit])
        clean = hit.model_copy(update={"ocr_low": False})
        assert select_main_note([clean]) == (clean, [])
    finally:
        strict.store.close()
        strict.catalog.close()


def test_atlas_in_the_sample_vault_finds_a_note_first_not_the_diagram(
    sample_caches: Path, tmp_path: Path, embedder
) -> None:
    data = tmp_path / "data"
    shutil.copytree(sample_caches, data)  # the session's index of the sample vault, left as it is
    settings = Settings(vault=sample_caches.parent / "vault", data_dir=data)
    store, catalog = EdgeStore(settings.store_path), Catalog(settings.catalog_path)
    try:
        record = catalog.get_note("Attachments/schema-atlas.png")
        assert record.status == NoteStatus.INDEXED and record.chunk_count == 0
        results = SearchEngine(store, embedder).search(SearchRequest(query="atlas")).results
        assert results[0].note_type == "note"
        assert all(r.path != "Attachments/schema-atlas.png" for r in results)
    finally:
        store.close()
        catalog.close()
