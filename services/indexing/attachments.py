"""Attachments in the index: a document's extracted pages become a note of type ``attachment``.

The extraction itself lives in ``services.attachments`` and is cached by content hash; here a cached
extraction is turned into what the pipeline stores (a ``ParsedNote`` whose chunks carry their page), and
a document whose text is not known yet is handed to ``extract_later`` (the indexer: the ``extract``
queue, so a long OCR never holds up a note) or read at once (``obsirag index``, the tests).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from services.attachments.cache import ExtractionCache
from services.attachments.extract import extract_document
from services.attachments.isolated import extract_isolated
from services.attachments.kinds import attachment_kind, max_bytes
from services.attachments.models import Extraction, ExtractionStatus
from services.config import Settings
from services.vault.models import NoteType, ParsedNote

PAGE_BREAK = "\n\n"
ExtractLater = Callable[[str], None]


def content_hash(file: Path) -> str:
    """sha256 of the file read in blocks (a 200 MB PDF never sits whole in memory)."""
    with file.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def kind_of(path: str, settings: Settings) -> str | None:
    return attachment_kind(path, settings.attachments)


def too_big(file: Path, kind: str, settings: Settings) -> str | None:
    size, limit = file.stat().st_size, max_bytes(kind, settings)
    return f"oversized document: {size / 1048576:.1f} MB (most: {limit / 1048576:.0f} MB)" if size > limit else None


def cached_or_extracted(
    cache: ExtractionCache,
    settings: Settings,
    path: str,
    digest: str,
    extract_later: ExtractLater | None,
    isolated: bool = False,
) -> Extraction | None:
    """The document's extraction from the cache, else read now (no ``extract_later``; ``isolated``: in a
    child process, as the extract worker reads), else None (queued)."""
    found = cache.get(digest)
    if found is not None:
        return found
    if extract_later is not None:
        extract_later(path)
        return None
    file, kind = settings.vault / path, kind_of(path, settings) or ""
    if isolated:
        extraction = extract_isolated(file, kind, settings, path, digest)
    else:
        extraction = extract_document(file, kind, settings)
    cache.put(digest, extraction)
    return extraction


def attachment_note(path: str, file: Path, digest: str, extraction: Extraction) -> ParsedNote:
    """The document as a note: its file name as title (« Manuel.pdf »), its pages as the body."""
    st = file.stat()
    modified = datetime.fromtimestamp(st.st_mtime).astimezone()
    body = PAGE_BREAK.join(page.text for page in extraction.pages)
    return ParsedNote(
        path=path,
        title=path.rsplit("/", 1)[-1],
        body=body,
        created=modified,
        modified=modified,
        note_type=NoteType.ATTACHMENT,
        content_hash=digest,
        size=st.st_size,
        mtime=st.st_mtime,
    )


NO_TEXT = "no text found in the document"
NO_TEXT_IMAGE = "no text found in the image: OCR read no real words, indexed without chunks"


def unusable(extraction: Extraction) -> bool:
    """Not indexed: refused, or a document without any readable text. An image without text (a diagram, a
    photo, OCR's « 1, » on a drawing: ``PageText.readable``) is indexed without chunks: nothing to search in
    it, and nothing wrong with it either."""
    if extraction.status != ExtractionStatus.OK:
        return True
    return extraction.kind != "image" and not extraction.readable_pages


def skip_reason(extraction: Extraction) -> str:
    """Why an ``unusable`` document is not indexed: the extraction's reason (refused, pages left without
    OCR), else ``NO_TEXT`` (its OCR's low confidence does not say why nothing is indexed)."""
    doubtful = extraction.reason.startswith("low-confidence OCR")
    return extraction.reason if extraction.reason and not doubtful else NO_TEXT


def warning(extraction: Extraction) -> str | None:
    """What the catalog records with an indexed document: an image without text says so (the dashboard
    lists it), else the extraction's reason (low-confidence pages, pages left without OCR)."""
    if extraction.kind == "image" and not extraction.readable_pages:
        return NO_TEXT_IMAGE
    return extraction.reason or None


def page_texts(extraction: Extraction) -> list[tuple[int, str]]:
    return [(page.number, page.text) for page in extraction.readable_pages]


def ocr_payloads(extraction: Extraction) -> dict[int, dict[str, object]]:
    """What each OCR page adds to its chunks' payload: ``ocr`` (``image``: a screenshot or photo, cited as
    such; ``scan``: a scanned page), its mean confidence, and ``ocr_low`` when below the settings' floor
    (such a text is cited, never the main note)."""
    origin = "image" if extraction.kind == "image" else "scan"
    return {
        page.number: {"ocr": origin, "ocr_confidence": round(page.confidence or 0.0, 1)}
        | ({"ocr_low": True} if page.low_confidence else {})
        for page in extraction.readable_pages
        if page.ocr
    }
