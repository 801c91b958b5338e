"""Which library reads which document, and which OCR engine reads French scans: speed and text quality.

Generates French documents (``tests/support/documents.py``: the text is known, accents and « œ » included),
runs each candidate on them and prints, per format and per candidate, the time per page and the character
error rate (Levenshtein distance / reference length, after NFC and collapsing whitespace). Two tables:
text extraction (PDF, DOCX, PPTX, ODT, EPUB) and OCR (a clean scan, a slightly rotated noisy scan, two
columns, a table, a phone photo). Candidates not installed are listed as such.

    PYTHONPATH=. .venv/bin/python bench/attachments.py
    PYTHONPATH=. .venv/bin/python bench/attachments.py --pdf-pages 120 --skip-ocr
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

from _common import ROOT, machine, print_table, write_results

sys.path.insert(0, str(ROOT))
from tests.support import documents as docs  # the tests' own generators

Extractor = Callable[[Path], str]


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split())


def words_found(hypothesis: str, reference: str) -> float:
    """Share of the reference's words found, in any order: what a search needs, blind to reading order."""
    found = set(normalise(hypothesis).split())
    words = normalise(reference).split()
    return sum(word in found for word in words) / max(1, len(words))


def cer(hypothesis: str, reference: str) -> float:
    from rapidfuzz.distance import Levenshtein

    ref = normalise(reference)
    return Levenshtein.distance(normalise(hypothesis), ref) / max(1, len(ref))


# --- text extractors -------------------------------------------------------------------------------------


def pdfium_text(path: Path) -> str:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(path)
    try:
        return "\n".join(page.get_textpage().get_text_bounded() for page in document)
    finally:
        document.close()


def pypdf_text(path: Path) -> str:
    import pypdf

    return "\n".join(page.extract_text() for page in pypdf.PdfReader(path).pages)


def pdfminer_text(path: Path) -> str:
    from pdfminer.high_level import extract_text

    return extract_text(str(path))


def docling_text(path: Path) -> str:
    from docling_core.types.doc.page import TextCellUnit
    from docling_parse.pdf_parser import DoclingPdfParser

    document = DoclingPdfParser().load(path_or_stream=str(path))
    pages = document.iterate_pages()
    return "\n".join(" ".join(c.text for c in page.iterate_cells(unit_type=TextCellUnit.LINE)) for _, page in pages)


def markitdown_text(path: Path) -> str:
    from markitdown import MarkItDown

    return MarkItDown().convert(str(path)).text_content


def docx_text(path: Path) -> str:
    import docx

    return "\n".join(p.text for p in docx.Document(str(path)).paragraphs)


def pptx_text(path: Path) -> str:
    from pptx import Presentation

    shapes = (s for slide in Presentation(str(path)).slides for s in slide.shapes if s.has_text_frame)
    return "\n".join(s.text_frame.text for s in shapes)


def odf_text(path: Path) -> str:
    from odf import teletype, text
    from odf.opendocument import load

    return "\n".join(teletype.extractText(p) for p in load(str(path)).getElementsByType(text.P))


def epub_text(path: Path) -> str:
    import zipfile

    from lxml import html

    with zipfile.ZipFile(path) as archive:
        names = sorted(n for n in archive.namelist() if n.endswith(".xhtml"))
        return "\n".join(html.fromstring(archive.read(n)).text_content() for n in names)


CANDIDATES: dict[str, dict[str, Extractor]] = {
    "pdf": {
        "pypdfium2": pdfium_text,
        "pypdf": pypdf_text,
        "pdfminer.six": pdfminer_text,
        "docling-parse": docling_text,
        "markitdown": markitdown_text,
    },
    "docx": {"python-docx": docx_text, "markitdown": markitdown_text},
    "pptx": {"python-pptx": pptx_text, "markitdown": markitdown_text},
    "odt": {"odfpy": odf_text},
    "epub": {"zipfile + lxml": epub_text, "markitdown": markitdown_text},
}


def make_documents(folder: Path, pdf_pages: int) -> dict[str, tuple[Path, str, int]]:
    """Format → (file, reference text, pages); the PDF repeats the three pages to ``pdf_pages``."""
    pages = (docs.PAGES * (pdf_pages // 3 + 1))[:pdf_pages]
    made = {
        "pdf": (docs.text_pdf(folder / "manuel.pdf", pages), pages),
        "docx": (docs.docx(folder / "manuel.docx"), ["Manuel du jardin", *docs.PAGES]),
        "pptx": (docs.pptx(folder / "manuel.pptx"), _slides()),
        "odt": (docs.odt(folder / "manuel.odt"), docs.PAGES),
        "epub": (docs.epub(folder / "manuel.epub"), docs.PAGES),
    }
    return {kind: (path, "\n".join(ref), len(pages) if kind == "pdf" else 3) for kind, (path, ref) in made.items()}


def _slides() -> list[str]:
    return [part for i, text in enumerate(docs.PAGES) for part in (f"Diapositive {i + 1}", text)]


def _markdown_plain(text: str) -> str:
    """markitdown writes Markdown: drop its heading marks and comments so that CER measures the words."""
    lines = [line.lstrip("#").strip() for line in text.splitlines() if not line.startswith("<!--")]
    return "\n".join(lines)


def bench_text(documents: dict[str, tuple[Path, str, int]], repeat: int) -> list[list[str]]:
    rows = []
    for kind, (path, reference, pages) in documents.items():
        for name, extract in CANDIDATES[kind].items():
            try:
                times, text = _timed(extract, path, repeat)
            except ImportError as exc:
                rows.append([kind, name, "not installed", "", "", str(exc.name)])
                continue
            text = _markdown_plain(text) if name == "markitdown" else text
            ms = statistics.median(times) * 1000 / pages
            rows.append([kind, name, f"{ms:.2f}", f"{pages / statistics.median(times):.0f}",
                         f"{cer(text, reference) * 100:.2f}", _accents(text)])  # fmt: skip
    return rows


def _timed(extract: Extractor, path: Path, repeat: int) -> tuple[list[float], str]:
    extract(path)  # warm: imports and first-call set-up are not a page's cost
    times, text = [], ""
    for _ in range(repeat):
        start = time.perf_counter()
        text = extract(path)
        times.append(time.perf_counter() - start)
    return times, text


def _accents(text: str) -> str:
    """Which of the tricky characters survived, as a quick eyeball of what CER averages away."""
    return " ".join(ch for ch in "œÀÉçê«" if ch in normalise(text)) or "none"


# --- OCR ------------------------------------------------------------------------------------------------


def ocr_pages() -> dict[str, tuple[object, str]]:
    left, right = docs.PAGES[0], docs.PAGES[1]
    table = " ".join(cell for row in docs.TABLE for cell in row)
    return {
        "clean scan": (docs.page_image(docs.PAGES[0]), docs.PAGES[0]),
        "rotated noisy scan": (docs.page_image(docs.PAGES[2], noisy=True), docs.PAGES[2]),
        "two columns": (docs.two_column_image(left, right), f"{left} {right}"),
        "table": (docs.table_image(), table),
        "phone photo": (docs.photo_image(docs.PAGES[1]), docs.PAGES[1]),
    }


def tesseract_ocr(image) -> str:
    import pytesseract

    return pytesseract.image_to_string(image, lang="fra", config="--psm 3")


def rapidocr_ocr(image) -> str:
    import numpy as np
    from rapidocr_onnxruntime import RapidOCR

    engine = _rapid(RapidOCR)
    result, _ = engine(np.asarray(image.convert("RGB")))
    return "\n".join(text for _, text, _ in result or [])


_ENGINES: dict[str, object] = {}


def _rapid(factory):
    if "rapid" not in _ENGINES:
        _ENGINES["rapid"] = factory()
    return _ENGINES["rapid"]


def bench_ocr() -> list[list[str]]:
    rows = []
    engines = {"tesseract 5 (fra)": tesseract_ocr, "rapidocr-onnxruntime (PP-OCRv4)": rapidocr_ocr}
    for name, engine in engines.items():
        try:
            engine(docs.page_image("Préchauffage."))  # loads the models once
        except Exception as exc:  # an engine not installed is a row, not a crash
            rows.append([name, "all", "unavailable", "", type(exc).__name__])
            continue
        for page, (image, reference) in ocr_pages().items():
            start = time.perf_counter()
            text = engine(image)
            seconds = time.perf_counter() - start
            quality = [f"{cer(text, reference) * 100:.1f}", f"{words_found(text, reference) * 100:.0f}"]
            rows.append([name, page, f"{seconds:.2f}", *quality, _accents(text)])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf-pages", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-ocr", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        documents = make_documents(Path(tmp), args.pdf_pages)
        text_rows = bench_text(documents, args.repeat)
    print_table(["format", "library", "ms/page", "pages/s", "CER %", "kept"], text_rows)
    ocr_rows = [] if args.skip_ocr else bench_ocr()
    if ocr_rows:
        print_table(["engine", "page", "s/page", "CER %", "words found %", "kept"], ocr_rows)
    write_results("attachments", {"machine": machine(), "text": text_rows, "ocr": ocr_rows})


if __name__ == "__main__":
    main()
