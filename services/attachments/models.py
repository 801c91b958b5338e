"""What an extraction holds: the text of each page (or slide, or chapter), and how it was read."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field


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


class Extraction(BaseModel):
    kind: str
    status: ExtractionStatus = ExtractionStatus.OK
    reason: str = ""
    page_count: int = 0
    pages: list[PageText] = Field(default_factory=list)

    @property
    def low_confidence_pages(self) -> list[int]:
        return [p.number for p in self.pages if p.low_confidence]

    @property
    def ocr_pages(self) -> int:
        return sum(p.ocr for p in self.pages)
