"""Documents read as rendered pages: PDFs (the text layer where it is usable, else OCR) and images (OCR).

A scanned page inside an otherwise digital PDF is read by OCR too: the decision is per page.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from pathlib import Path

from PIL import ImageOps

from services.attachments import guards, ocr
from services.attachments.models import PageText
from services.config import Settings

Progress = Callable[[int, int], None]  # (pages done, pages in all)
OCR_DPI = 200  # the bench's pages: Tesseract reads 12 pt text exactly at this resolution
OCR_MAX_SIDE = 4000  # a 48-MP photo read whole takes Tesseract minutes; text stays legible at this size
MIN_TEXT_CHARS = 16  # fewer letters or digits than this on a page: a scan (or a blank page), read by OCR
BROKEN_SHARE = 0.1  # more unmappable glyphs than this: a text layer without a usable font map, read by OCR


class Unread(list[int]):
    """Page numbers left unread because no OCR engine is available, and why (with the install command)."""

    reason: str = ocr.NO_ENGINE


def read_pdf(file: Path, settings: Settings, progress: Progress) -> tuple[list[PageText], Unread, int]:
    """Every page's text, the pages left without OCR, and the page count."""
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(file)
    except pdfium.PdfiumError as exc:
        raise _pdf_error(exc) from exc
    try:
        count = len(document)
        guards.check_pages(count, settings.attachment_max_pages)
        pages, unread = [], Unread()
        for index in range(count):
            page = document[index]
            text = page.get_textpage().get_text_bounded()
            if usable(text):
                pages.append(PageText(number=index + 1, text=_clean(text)))
            else:
                read = _ocr_pdf_page(page, index + 1, settings)
                if isinstance(read, ocr.OcrUnavailable):
                    unread.append(index + 1)
                    unread.reason = str(read)
                else:
                    pages.append(read)
            progress(index + 1, count)
        return pages, unread, count
    finally:
        document.close()


def _ocr_pdf_page(page, number: int, settings: Settings) -> PageText | ocr.OcrUnavailable:
    try:
        ocr.check_engine(settings.ocr_languages)
    except ocr.OcrUnavailable as exc:
        return exc
    image = page.render(scale=OCR_DPI / 72, grayscale=True).to_pil()
    return _ocr_page(image, number, settings)


def read_image(file: Path, settings: Settings) -> list[PageText]:
    """An image is one page read by OCR (raises ``OcrUnavailable`` without an engine: the file is skipped)."""
    ocr.check_engine(settings.ocr_languages)
    with guards.open_image(file) as image:
        image.seek(0)  # a multi-page TIFF: its first frame
        upright = ImageOps.exif_transpose(image)  # a phone photo's rotation flag
        upright.thumbnail((OCR_MAX_SIDE, OCR_MAX_SIDE))  # in place, only ever smaller
        return [_ocr_page(upright, 1, settings)]


def _ocr_page(image, number: int, settings: Settings) -> PageText:
    read = ocr.read_image(image, settings.ocr_languages, settings.ocr_page_seconds)
    # No word at all is a blank page, not a doubtful one: only words read with little confidence are marked.
    low = read.confidence is not None and read.confidence < settings.ocr_min_confidence
    return PageText(number=number, text=read.text, ocr=True, confidence=read.confidence, low_confidence=low)


def usable(text: str) -> bool:
    """Whether a page's text layer can be trusted: enough letters, and few characters a broken font map
    leaves (U+FFFD, private-use glyph codes, control characters); else the page is read by OCR."""
    visible = [ch for ch in text if not ch.isspace()]
    broken = sum(ch == "\ufffd" or "\ue000" <= ch <= "\uf8ff" or unicodedata.category(ch) == "Cc" for ch in visible)
    return sum(ch.isalnum() for ch in visible) >= MIN_TEXT_CHARS and broken <= BROKEN_SHARE * len(visible)


_LIGATURES = str.maketrans({chr(c): unicodedata.normalize("NFKC", chr(c)) for c in range(0xFB00, 0xFB07)})


def _clean(text: str) -> str:
    """PDFium ends lines with CRLF and may keep soft hyphens: plain newlines, no invisible characters, and
    typographic ligatures (« ﬁ », « ﬂ ») as their letters, so that « ﬁnance » is found by « finance »."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u00ad", "").replace("\x00", "")
    return text.translate(_LIGATURES)


def _pdf_error(exc: Exception) -> guards.DocumentRefused:
    message = str(exc)
    if "password" in message.lower():
        return guards.unreadable("encrypted document: protected by a password, not read")
    return guards.unreadable(f"unreadable document: damaged or truncated PDF ({message})")
