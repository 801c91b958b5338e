"""What an extraction holds: the text of each page (or slide, or chapter), and how it was read."""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, Field

# What OCR must find on a page for it to hold text (``PageText.readable``): at least this many words of three
# letters or more, read with a mean confidence of this much at least. Less is a drawing's strokes taken for
# characters: the sample vault's diagram `schema-atlas.png` is read as « 1, » at 0 %.
OCR_MIN_WORDS = 2
OCR_NOISE_CONFIDENCE = 30.0
_WORD = re.compile(r"[^\W\d_]{3,}")  # three letters or more, accents included; digits and punctuation are not


class ExtractionStatus(StrEnum):
    OK = "ok"
    SKIPPED = "skipped"  # not read on purpose: too big, too many pages, no OCR engine (the reason says)
    FAILED = "failed"  # could not be read: encrypted, corrupt, truncated (the reason says)


class PageText(BaseModel):
    """One page's text; ``number`` is 1-based (a PDF page, a slide, an EPUB chapter; 1 for a DOCX or an image)."""

    number: int
    text: str
    ocr: bool = False
    confidence: float | None = None  # OCR's mean word confidence, 0–100
    low_confidence: bool = False

    @property
    def readable(self) -> bool:
        """Whether the page holds text to index: any text for a text layer; real words for OCR (above)."""
        if not self.ocr:
            return bool(self.text.strip())
        confident = self.confidence is not None and self.confidence >= OCR_NOISE_CONFIDENCE
        return confident and len(_WORD.findall(self.text)) >= OCR_MIN_WORDS


class Extraction(BaseModel):
    kind: str
    status: ExtractionStatus = ExtractionStatus.OK
    reason: str = ""
    page_count: int = 0
    pages: list[PageText] = Field(default_factory=list)

    @property
    def readable_pages(self) -> list[PageText]:
        return [p for p in self.pages if p.readable]

    @property
    def low_confidence_pages(self) -> list[int]:
        return [p.number for p in self.pages if p.low_confidence]

    @property
    def ocr_pages(self) -> int:
        return sum(p.ocr for p in self.pages)
