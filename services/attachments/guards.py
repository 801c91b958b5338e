"""The limits that make a bad document fail alone, checked before a reader decodes anything big.

A refused document raises ``DocumentRefused`` with its status (skipped: too big on purpose; failed: cannot
be read) and a reason that starts with the words ``services.catalog.problems`` turns into a fix.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from PIL import Image

from services.attachments.models import ExtractionStatus

MAX_PIXELS = 80_000_000  # an 80-megapixel photo decodes to ~240 MB of RGB: above that, refuse
MAX_UNZIPPED = 300 * 1024 * 1024  # an Office file or EPUB unpacking to more than this is not a document
MAX_RATIO = 150  # members compressed more than this (text compresses ~5-20×) are a zip bomb's mark
_RATIO_FLOOR = 10 * 1024 * 1024  # small members may compress extremely (repeated XML): judged above this size


class DocumentRefused(Exception):
    def __init__(self, status: ExtractionStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def refuse(reason: str) -> DocumentRefused:
    return DocumentRefused(ExtractionStatus.SKIPPED, reason)


def unreadable(reason: str) -> DocumentRefused:
    return DocumentRefused(ExtractionStatus.FAILED, reason)


def check_size(size: int, limit: int) -> None:
    if size > limit:
        raise refuse(f"oversized document: {size / 1048576:.1f} MB (most: {limit / 1048576:.0f} MB)")


def check_pages(count: int, limit: int) -> None:
    if count > limit:
        raise refuse(f"too many pages: {count} (most: {limit})")


def check_archive(file: Path) -> None:
    """A ZIP container (DOCX, PPTX, ODF, EPUB) whose declared sizes a zip bomb would betray."""
    try:
        with zipfile.ZipFile(file) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise unreadable(f"unreadable document: not a valid ZIP container ({exc})") from exc
    total = sum(m.file_size for m in members)
    bomb = next(
        (m for m in members if m.file_size > _RATIO_FLOOR and m.file_size > MAX_RATIO * max(1, m.compress_size)), None
    )
    if total > MAX_UNZIPPED or bomb is not None:
        raise unreadable(f"suspicious archive (zip bomb?): unpacks to {total / 1048576:.0f} MB; not opened")


def open_image(file: Path) -> Image.Image:
    """The image, its size checked from the header before any pixel is decoded."""
    try:
        image = Image.open(file)
        width, height = image.size
    except Image.DecompressionBombError as exc:  # Pillow's own cap (~179 MP) fires at open: same refusal
        limit = (Image.MAX_IMAGE_PIXELS or 0) * 2 // 1_000_000
        raise refuse(f"image too large: over {limit} megapixels, not decoded") from exc
    except (OSError, ValueError) as exc:
        raise unreadable(f"unreadable document: not an image Pillow can read ({exc})") from exc
    if width * height > MAX_PIXELS:
        image.close()
        raise refuse(f"image too large: {width}×{height} pixels (most: {MAX_PIXELS // 1_000_000} megapixels)")
    return image
