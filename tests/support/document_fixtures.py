"""French documents made once per session (the OCR ones cost a few seconds each to read)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import documents as docs

# Short pages: Tesseract's time grows with the page's text, and one paragraph proves the same as three.
SCAN = docs.PAGES[1]


@pytest.fixture(scope="session")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One file per kind, by vault-relative name: what a user's attachment folder holds."""
    root = tmp_path_factory.mktemp("documents")
    return {
        "Manuel.pdf": docs.text_pdf(root / "Manuel.pdf"),
        "Scan.pdf": docs.scanned_pdf(root / "Scan.pdf", [SCAN], crop=True),
        "Mixte.pdf": docs.mixed_pdf(root / "Mixte.pdf", scanned=1, crop=True),
        "Rapport.docx": docs.docx(root / "Rapport.docx"),
        "Diapos.pptx": docs.pptx(root / "Diapos.pptx"),
        "Compte rendu.odt": docs.odt(root / "Compte rendu.odt"),
        "Livre.epub": docs.epub(root / "Livre.epub"),
        "Tableau.png": docs.save_png(docs.page_image(docs.PAGES[2], crop=True), root / "Tableau.png"),
    }
