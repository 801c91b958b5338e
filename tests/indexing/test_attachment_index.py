"""Attachments through the real pipeline: pages into chunks, search hits with their page, no second reading."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from services.attachments.cache import ExtractionCache
from services.catalog import Catalog
from services.catalog.models import NoteStatus
from services.config import Settings
from services.indexing.pipeline import IndexPipeline
from services.indexing.reconcile import changed_paths
from services.retrieval.search import SearchEngine, SearchRequest
from services.retrieval.store import EdgeStore
from services.vault.models import NoteType
from tests.conftest import tree_hashes
from tests.support import documents as docs

# The page each document holds the bees' paragraph on (docs.PAGES[1]).
BEES_PAGE = {
    "Docs/Manuel.pdf": 2, "Docs/Scan.pdf": 1, "Docs/Mixte.pdf": 2, "Docs/Diapos.pptx": 2,
    "Docs/Livre.epub": 2, "Docs/Rapport.docx": 1, "Docs/Compte rendu.odt": 1,
}  # fmt: skip


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory, documents: dict[str, Path], embedder):
    """A vault of one note, every kind of document, bad ones, and files the rules leave out; indexed once."""
    root = tmp_path_factory.mktemp("attached")
    vault = root / "vault"
    (vault / "Docs").mkdir(parents=True)
    (vault / "Carnet.md").write_text("# Carnet\n\nJe note ici mes lectures sur le jardin.", encoding="utf-8")
    for name, file in documents.items():
        shutil.copy(file, vault / "Docs" / name)
    docs.encrypted_pdf(vault / "Docs/Coffre.pdf", documents["Manuel.pdf"])
    docs.zip_bomb_docx(vault / "Docs/Bombe.docx")
    (vault / "Docs/Abîmé.pdf").write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 8)
    docs.huge_png(vault / "Docs/Immense.png")
    for hidden in (".obsidian/plugins/guide.pdf", "Privé/relevé.pdf"):
        (vault / hidden).parent.mkdir(parents=True)
        shutil.copy(documents["Manuel.pdf"], vault / hidden)
    settings = Settings(vault=vault, data_dir=root / "data", exclude=["Privé/"])
    before = tree_hashes(vault)
    pipeline = IndexPipeline(settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), embedder)
    report = pipeline.sync_paths(changed_paths(settings, pipeline.catalog))
    yield pipeline, report, before
    pipeline.store.close()
    pipeline.catalog.close()


def test_every_document_is_indexed_as_an_attachment_and_bad_ones_alone_fail(indexed) -> None:
    pipeline, report, before = indexed
    assert sorted(report.indexed) == sorted(["Carnet.md", *(f"Docs/{name}" for name in docs_names())])
    assert not report.failed and not report.extracting
    manual = pipeline.catalog.get_note("Docs/Manuel.pdf")
    assert manual.note_type == NoteType.ATTACHMENT and manual.title == "Manuel.pdf" and manual.chunk_count >= 3
    for path, start in [("Docs/Coffre.pdf", "encrypted document"), ("Docs/Bombe.docx", "suspicious archive"),
                        ("Docs/Abîmé.pdf", "unreadable document")]:  # fmt: skip
        record = pipeline.catalog.get_note(path)
        assert record.status == NoteStatus.ERROR and record.message.startswith(start), (path, record.message)
    huge = pipeline.catalog.get_note("Docs/Immense.png")
    assert huge.status == NoteStatus.SKIPPED and huge.message.startswith("image too large")
    assert pipeline.catalog.get_note(".obsidian/plugins/guide.pdf") is None
    assert pipeline.catalog.get_note("Privé/relevé.pdf") is None
    assert tree_hashes(pipeline.settings.vault) == before  # read-only


def docs_names() -> list[str]:
    return ["Manuel.pdf", "Scan.pdf", "Mixte.pdf", "Rapport.docx", "Diapos.pptx", "Compte rendu.odt",
            "Livre.epub", "Tableau.png"]  # fmt: skip


def test_a_french_paraphrase_finds_each_document_at_its_page(indexed, embedder) -> None:
    pipeline, _, _ = indexed
    engine = SearchEngine(pipeline.store, embedder)
    response = engine.search(SearchRequest(query="combien de miel une colonie d'abeilles donne-t-elle par an ?", k=12))
    pages = {r.path: r.page for r in response.results if r.path in BEES_PAGE}
    assert pages == BEES_PAGE
    assert response.results[0].path in BEES_PAGE and response.results[0].note_type == "attachment"
    budget = engine.search(SearchRequest(query="prix de la salle louée pour la fête", types=[NoteType.ATTACHMENT]))
    assert {r.path: r.page for r in budget.results}["Docs/Tableau.png"] == 1
    assert {r.path: r.page for r in budget.results}["Docs/Manuel.pdf"] == 3
    notes = engine.search(SearchRequest(query="mes lectures sur le jardin"))
    assert next(r for r in notes.results if r.path == "Carnet.md").page is None


def test_restart_rename_and_reindex_never_read_a_document_again(indexed, embedder) -> None:
    pipeline, _, _ = indexed
    settings = pipeline.settings
    cached = ExtractionCache(settings.extraction_cache_path).count()
    asked: list[str] = []
    restarted = IndexPipeline(settings, pipeline.store, pipeline.catalog, embedder, extract_later=asked.append)
    again = restarted.sync_paths(changed_paths(settings, pipeline.catalog))
    assert not again.indexed and again.chunks_embedded == 0 and not asked
    (settings.vault / "Docs/Scan.pdf").rename(settings.vault / "Docs/Scan renommé.pdf")
    renamed = restarted.sync_paths(changed_paths(settings, pipeline.catalog))
    assert renamed.indexed == ["Docs/Scan renommé.pdf"] and renamed.deleted == ["Docs/Scan.pdf"]
    # Its text came from the extraction cache; its chunks are embedded again only because their context line
    # holds the file name, the document's title.
    assert not asked
    assert ExtractionCache(settings.extraction_cache_path).count() == cached


def test_a_document_not_yet_extracted_is_handed_to_the_extract_queue(indexed, embedder, documents) -> None:
    pipeline, _, _ = indexed
    shutil.copy(documents["Manuel.pdf"], pipeline.settings.vault / "Docs/Nouveau.pdf")
    docs.text_pdf(pipeline.settings.vault / "Docs/Nouveau.pdf", ["Une page toute neuve sur les haies bocagères."])
    asked: list[str] = []
    later = IndexPipeline(pipeline.settings, pipeline.store, pipeline.catalog, embedder, extract_later=asked.append)
    report = later.sync_paths(["Docs/Nouveau.pdf", "Carnet.md"])
    assert asked == ["Docs/Nouveau.pdf"] and report.extracting == ["Docs/Nouveau.pdf"]
    assert pipeline.catalog.get_note("Docs/Nouveau.pdf") is None  # indexed once the worker has read it
    (pipeline.settings.vault / "Docs/Nouveau.pdf").unlink()
