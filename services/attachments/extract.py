"""The one entry point: a vault file in, its pages out, whatever the document does.

Every outcome is an ``Extraction``: read (``ok``, maybe with pages marked low-confidence or left unread),
``skipped`` (too big, too many pages, no OCR engine: on purpose, with the reason) or ``failed`` (encrypted,
damaged, a zip bomb: with the reason). Nothing here raises for a bad document.
"""

from __future__ import annotations

import logging
from pathlib import Path

from services.attachments import guards, ocr, readers
from services.attachments.kinds import max_bytes
from services.attachments.models import Extraction, ExtractionStatus, PageText
from services.attachments.pages import Progress, read_image, read_pdf
from services.config import Settings

log = logging.getLogger(__name__)
_ZIPPED = {"docx": readers.read_docx, "pptx": readers.read_pptx, "odf": readers.read_odf, "epub": readers.read_epub}


def extract_document(file: Path, kind: str, settings: Settings, progress: Progress | None = None) -> Extraction:
    """The document's pages; ``progress(done, total)`` after each PDF page."""
    try:
        guards.check_size(file.stat().st_size, max_bytes(kind, settings))
        return _read(file, kind, settings, progress or (lambda done, total: None))
    except guards.DocumentRefused as exc:
        return Extraction(kind=kind, status=exc.status, reason=exc.reason)
    except ocr.OcrUnavailable as exc:
        return Extraction(kind=kind, status=ExtractionStatus.SKIPPED, reason=str(exc))
    except Exception as exc:  # a reader's own error on a damaged file: this file fails, the vault goes on
        log.warning("cannot read %s: %s: %s", file.name, type(exc).__name__, exc)
        return Extraction(
            kind=kind, status=ExtractionStatus.FAILED, reason=f"unreadable document: {type(exc).__name__}: {exc}"
        )


def _read(file: Path, kind: str, settings: Settings, progress: Progress) -> Extraction:
    if kind == "pdf":
        pages, unread, count = read_pdf(file, settings, progress)
        if unread and not pages:
            return Extraction(kind=kind, status=ExtractionStatus.SKIPPED, reason=unread.reason, page_count=count)
        reason = f"{unread.reason}: pages {_numbers(unread)} not read" if unread else ""
        return _done(kind, pages, count, reason)
    if kind == "image":
        return _done(kind, read_image(file, settings), 1, "")
    guards.check_archive(file)
    pages = _ZIPPED[kind](file)
    guards.check_pages(len(pages), settings.attachment_max_pages)
    progress(len(pages), len(pages))
    return _done(kind, pages, len(pages), "")


def _done(kind: str, pages: list[PageText], count: int, reason: str) -> Extraction:
    extraction = Extraction(kind=kind, pages=pages, page_count=count, reason=reason)
    low = extraction.low_confidence_pages
    if low and not reason:
        extraction.reason = f"low-confidence OCR: pages {_numbers(low)}"
    return extraction


def _numbers(pages: list[int]) -> str:
    shown = ", ".join(str(n) for n in pages[:10])
    return shown + (f"… ({len(pages)} in all)" if len(pages) > 10 else "")
