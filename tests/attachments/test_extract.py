"""Reading documents page by page with the real libraries and Tesseract: text, pages, OCR, bad files."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from rapidfuzz.distance import Levenshtein

from services.attachments.extract import extract_document
from services.attachments.kinds import attachment_kind
from services.attachments.models import Extraction, ExtractionStatus
from services.config import Settings
from tests.support import documents as docs
from tests.support.document_fixtures import SCAN


@pytest.fixture(scope="module")
def reader_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    root = tmp_path_factory.mktemp("reader")
    return Settings(vault=root, data_dir=root / "data", attachment_max_pages=40)


@pytest.fixture(scope="module")
def extracted(documents: dict[str, Path], reader_settings: Settings) -> dict[str, Extraction]:
    kinds = {name: attachment_kind(name, reader_settings.attachments) for name in documents}
    return {name: extract_document(file, kinds[name] or "", reader_settings) for name, file in documents.items()}


def cer(text: str, reference: str) -> float:
    flat, ref = " ".join(text.split()), " ".join(reference.split())
    return Levenshtein.distance(flat, ref) / len(ref)


def test_each_kind_gives_its_pages_with_french_intact(extracted: dict[str, Extraction]) -> None:
    pdf = extracted["Manuel.pdf"]
    assert pdf.status == ExtractionStatus.OK and pdf.page_count == 3
    assert [p.number for p in pdf.pages] == [1, 2, 3] and not any(p.ocr for p in pdf.pages)
    assert "Le cœur du manuel" in pdf.pages[0].text and "À la fin" in pdf.pages[0].text
    assert "Élevage des abeilles" in pdf.pages[1].text
    slides = extracted["Diapos.pptx"]
    assert [p.number for p in slides.pages] == [1, 2, 3] and "Budget prévisionnel" in slides.pages[2].text
    assert [p.number for p in extracted["Livre.epub"].pages] == [1, 2, 3]
    for name in ("Rapport.docx", "Compte rendu.odt"):
        assert extracted[name].status == ExtractionStatus.OK
        assert all(text in extracted[name].pages[0].text for text in docs.PAGES), name


def test_scanned_pdf_is_read_by_ocr_under_three_percent_cer(extracted: dict[str, Extraction]) -> None:
    scan = extracted["Scan.pdf"]
    assert scan.status == ExtractionStatus.OK and scan.pages[0].ocr
    assert cer(scan.pages[0].text, SCAN) < 0.03, scan.pages[0].text
    assert scan.pages[0].confidence and scan.pages[0].confidence > 80 and not scan.low_confidence_pages


def test_mixed_pdf_reads_only_its_scanned_page_by_ocr(extracted: dict[str, Extraction]) -> None:
    mixed = extracted["Mixte.pdf"]
    assert [(p.number, p.ocr) for p in mixed.pages] == [(1, False), (2, True), (3, False)]
    assert cer(mixed.pages[1].text, docs.PAGES[1]) < 0.03


def test_image_is_one_ocr_page(extracted: dict[str, Extraction]) -> None:
    image = extracted["Tableau.png"]
    assert image.page_count == 1 and image.pages[0].ocr
    assert cer(image.pages[0].text, docs.PAGES[2]) < 0.03


def test_a_page_read_poorly_is_marked_low_confidence_and_a_blank_one_is_not(
    tmp_path: Path, reader_settings: Settings
) -> None:
    page = docs.page_image(docs.PAGES[0], crop=True)
    blurred = page.resize((page.width // 5, page.height // 5))  # a page scanned at 40 dpi: words half guessed
    extraction = extract_document(docs.save_png(blurred, tmp_path / "flou.png"), "image", reader_settings)
    assert extraction.status == ExtractionStatus.OK and extraction.low_confidence_pages == [1]
    assert extraction.reason.startswith("low-confidence OCR") and extraction.pages[0].confidence < 70
    blank = docs.save_png(docs.page_image("", crop=True), tmp_path / "blanc.png")
    assert extract_document(blank, "image", reader_settings).low_confidence_pages == []


@pytest.fixture(scope="module")
def bad_documents(tmp_path_factory: pytest.TempPathFactory, documents: dict[str, Path]) -> dict[str, tuple[Path, str]]:
    root = tmp_path_factory.mktemp("bad")
    text = documents["Manuel.pdf"].read_bytes()
    (root / "tronque.pdf").write_bytes(text[: len(text) // 3])
    (root / "corrompu.pdf").write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40)
    return {
        "encrypted": (docs.encrypted_pdf(root / "secret.pdf", documents["Manuel.pdf"]), "pdf"),
        "corrupt": (root / "corrompu.pdf", "pdf"),
        "truncated": (root / "tronque.pdf", "pdf"),
        "zip bomb": (docs.zip_bomb_docx(root / "bombe.docx"), "docx"),
        "too many pages": (docs.many_page_pdf(root / "long.pdf", 41), "pdf"),
        "huge image": (docs.huge_png(root / "immense.png"), "image"),
        "not a docx": (documents["Manuel.pdf"], "docx"),
    }


REASONS = {
    "encrypted": (ExtractionStatus.FAILED, "encrypted document"),
    "corrupt": (ExtractionStatus.FAILED, "unreadable document"),
    "zip bomb": (ExtractionStatus.FAILED, "suspicious archive"),
    "too many pages": (ExtractionStatus.SKIPPED, "too many pages: 41 (most: 40)"),
    "huge image": (ExtractionStatus.SKIPPED, "image too large"),
    "not a docx": (ExtractionStatus.FAILED, "unreadable document"),
}


@pytest.mark.parametrize("case", sorted(REASONS))
def test_bad_documents_fail_alone_with_their_reason(case: str, bad_documents, reader_settings: Settings) -> None:
    file, kind = bad_documents[case]
    start = time.perf_counter()
    extraction = extract_document(file, kind, reader_settings)
    status, reason = REASONS[case]
    assert (extraction.status, extraction.reason[: len(reason)]) == (status, reason)
    assert time.perf_counter() - start < 5 and not extraction.pages


def test_truncated_pdf_is_read_or_refused_never_raised(bad_documents, reader_settings: Settings) -> None:
    extraction = extract_document(bad_documents["truncated"][0], "pdf", reader_settings)
    assert extraction.status in (ExtractionStatus.OK, ExtractionStatus.FAILED)
    assert extraction.status == ExtractionStatus.OK or extraction.reason.startswith("unreadable document")


def test_oversized_document_is_skipped_before_it_is_opened(
    documents: dict[str, Path], reader_settings: Settings
) -> None:
    tiny = reader_settings.model_copy(update={"attachment_max_mb": {"pdf": 0.001}})
    extraction = extract_document(documents["Manuel.pdf"], "pdf", tiny)
    assert extraction.status == ExtractionStatus.SKIPPED and extraction.reason.startswith("oversized document")


def test_no_ocr_engine_skips_with_the_install_command(documents: dict[str, Path], reader_settings: Settings) -> None:
    # A language no Tesseract has stands for a missing engine: the same refusal, with the command to run.
    missing = reader_settings.model_copy(update={"ocr_languages": "zzz"})
    scan = extract_document(documents["Scan.pdf"], "pdf", missing)
    assert scan.status == ExtractionStatus.SKIPPED and "apt-get install tesseract-ocr-zzz" in scan.reason
    mixed = extract_document(documents["Mixte.pdf"], "pdf", missing)  # its text pages are still read
    assert mixed.status == ExtractionStatus.OK and [p.number for p in mixed.pages] == [1, 3]
    assert mixed.reason.startswith("no OCR engine") and "pages 2 not read" in mixed.reason


def test_a_text_layer_is_trusted_only_when_it_reads_as_text() -> None:
    from services.attachments.pages import usable

    assert usable("Le cœur du manuel : la taille des arbres fruitiers.")
    assert not usable("  12  \n")  # a scan's page number: the page itself is an image
    assert not usable("\ue012\ue044\ue0a1 " * 10 + "Th\ufffdo pr\ufffdlev\ufffde")  # glyph codes, no font map
