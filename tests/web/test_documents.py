"""A document's page of extracted text, its backlinks, where a cited page opens, and MCP's read_note of it."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from litestar.testing import TestClient

from services import vault
from services.attachments.cache import ExtractionCache
from services.attachments.extract import extract_document
from services.catalog import Catalog
from services.catalog.models import NoteRecord, NoteStatus, Provenance, Source, Turn
from services.config import Settings
from services.mcp.notes import NoteReader
from services.vault.models import NoteType
from tests.support.web_app import html
from web.app import create_app
from web.urls import source_url


@pytest.fixture(scope="module")
def document_vault(tmp_path_factory: pytest.TempPathFactory, documents: dict[str, Path]) -> Iterator[tuple]:
    """A vault with slides, a PDF and a note linking both; the catalog as the indexer leaves it."""
    root = tmp_path_factory.mktemp("documents-web")
    settings = Settings(vault=root / "vault", data_dir=root / "data", redis_url=f"unix://{root}/none.sock")
    (settings.vault / "Docs").mkdir(parents=True)
    for name in ("Diapos.pptx", "Manuel.pdf"):
        shutil.copy(documents[name], settings.vault / "Docs" / name)
    (settings.vault / "Lecture.md").write_text(
        "# Lecture\n\nVoir [[Diapos.pptx]] et ![[Manuel.pdf#page=3]].\n", encoding="utf-8"
    )
    catalog, cache = Catalog(settings.catalog_path), ExtractionCache(settings.extraction_cache_path)
    now = datetime.now(UTC)
    for path, kind in (("Docs/Diapos.pptx", "pptx"), ("Docs/Manuel.pdf", "pdf")):
        digest = vault.file_hash((settings.vault / path).read_bytes())
        cache.put(digest, extract_document(settings.vault / path, kind, settings))
        catalog.upsert_note(
            NoteRecord(
                path=path,
                title=path.rsplit("/", 1)[-1],
                note_type=NoteType.ATTACHMENT,
                content_hash=digest,
                status=NoteStatus.INDEXED,
                mtime=0,
                size=1,
                chunk_count=3,
                indexed_at=now,
            )
        )
    note = vault.read_note(settings.vault, "Lecture.md", settings.max_file_bytes)
    catalog.upsert_note(
        NoteRecord(
            **note.model_dump(include={"path", "title", "content_hash", "mtime", "size"}),
            status=NoteStatus.INDEXED,
            chunk_count=1,
            indexed_at=now,
        )
    )
    catalog.replace_links("Lecture.md", note.links)
    catalog.resolve_links()
    yield settings, catalog
    catalog.close()


@pytest.fixture(scope="module")
def document_client(document_vault: tuple[Settings, Catalog]) -> Iterator[TestClient]:
    with TestClient(create_app(document_vault[0])) as client:
        yield client


def test_slides_are_shown_page_by_page_with_their_backlinks(document_client: TestClient) -> None:
    page = html(document_client, "/documents/Docs/Diapos.pptx")
    assert "indexée" in page and not re.search(r">\s*indexed\s*<", page)  # the badge in French
    assert 'id="page-2"' in page and "Élevage des abeilles" in page and "Diapositive 3" in page
    assert 'href="/notes/Lecture.md"' in page  # [[Diapos.pptx]] in a note is a backlink of the document
    pdf = html(document_client, "/documents/Docs/Manuel.pdf")
    assert 'href="/notes/Lecture.md"' in pdf and 'href="/vault-files/Docs/Manuel.pdf"' in pdf
    html(document_client, "/documents/Lecture.md", status=404)  # a note is not a document
    html(document_client, "/documents/Docs/Absent.pdf", status=404)


def test_a_cited_page_opens_where_it_is() -> None:
    assert source_url("Docs/Manuel.pdf", None, 12) == "/vault-files/Docs/Manuel.pdf#page=12"
    assert source_url("Docs/Diapos.pptx", None, 3) == "/documents/Docs/Diapos.pptx#page-3"
    assert source_url("Projets/Atlas.md", "Objectifs", None) == "/notes/Projets/Atlas.md#objectifs"
    assert Source(n=1, title="Manuel.pdf", path="Docs/Manuel.pdf", page=12).label == "Manuel.pdf, p. 12"


def test_mcp_read_note_gives_a_document_page_by_page(document_vault: tuple[Settings, Catalog]) -> None:
    reader = NoteReader(*document_vault)
    slides = reader.read("Docs/Diapos.pptx")
    assert slides.type == "attachment" and slides.headings == ["Page 1", "Page 2", "Page 3"]
    assert [b.path for b in slides.backlinks] == ["Lecture.md"]
    page = reader.read("Manuel.pdf", heading="Page 3")  # by its title, one page
    assert page.path == "Docs/Manuel.pdf" and "Budget prévisionnel" in page.body and "abeilles" not in page.body


def test_a_chat_answer_cites_the_page_and_its_link_opens_it(
    document_vault: tuple[Settings, Catalog], document_client: TestClient
) -> None:
    _, catalog = document_vault
    thread = catalog.create_thread("Miel")
    sources = [
        Source(n=1, title="Manuel.pdf", path="Docs/Manuel.pdf", page=2, primary=True),
        Source(n=2, title="Diapos.pptx", path="Docs/Diapos.pptx", page=2),
    ]
    answer = "Une ruche produit environ quinze kilogrammes de miel par saison [1] [2]."
    turn = Turn(thread_id=thread, question="Combien de miel ?", answer=answer, sources=sources,
                provenance=Provenance.VAULT, created_at=datetime.now(UTC))  # fmt: skip
    catalog.add_turn(turn)
    page = html(document_client, f"/?thread={thread}")
    assert 'href="/vault-files/Docs/Manuel.pdf#page=2"' in page and "[1] Manuel.pdf, p. 2" in page
    assert 'href="/documents/Docs/Diapos.pptx#page-2"' in page and "[2] Diapos.pptx, p. 2" in page
    # the inline [n] of the answer opens the same page as the source list, not a /notes/ URL (a 404)
    assert 'class="cite" href="/vault-files/Docs/Manuel.pdf#page=2"' in page
    assert 'class="cite" href="/documents/Docs/Diapos.pptx#page-2"' in page and "/notes/Docs/" not in page


def test_the_dashboard_shows_a_document_being_read_and_a_low_confidence_one(
    document_vault: tuple[Settings, Catalog], document_client: TestClient
) -> None:
    settings, catalog = document_vault
    cache = ExtractionCache(settings.extraction_cache_path)
    cache.start("Docs/Archives scannées.pdf", "abc")
    cache.advance("Docs/Archives scannées.pdf", 12, 300)
    record = catalog.get_note("Docs/Manuel.pdf")
    catalog.upsert_note(record.model_copy(update={"message": "low-confidence OCR: pages 3"}))
    try:
        live = html(document_client, "/admin/live")
        assert "Lecture de Docs/Archives scannées.pdf en cours : 12/300 pages" in live
        files = html(document_client, "/admin")
        assert "lecture OCR incertaine : pages 3" in files and "rescanne-les" in files
        document = html(document_client, "/documents/Docs/Manuel.pdf")  # stored in English, said in French
        assert "lecture OCR incertaine : pages 3</p>" in document and ">low-confidence" not in document
    finally:
        cache.finish("Docs/Archives scannées.pdf")
        catalog.upsert_note(record)
