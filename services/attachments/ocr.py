"""OCR with Tesseract (Debian's ``tesseract-ocr`` + ``tesseract-ocr-fra``), chosen by ``bench/attachments.py``.

One page at a time, with the mean confidence of its words so that a page read poorly can be marked.
"""

from __future__ import annotations

import shutil
from functools import cache

from PIL import Image
from pydantic import BaseModel

INSTALL = "apt-get install tesseract-ocr tesseract-ocr-fra"
# One OpenMP thread per page: on a shared 2-core machine Tesseract's own threads made a page 1.4× slower
# (2.4 s against 3.4 s at load 5), and the indexer and the model need the other core. Set only in the
# extraction's child process (``isolated``): OMP_THREAD_LIMIT would cap every OpenMP library of a process.
ONE_THREAD = {"OMP_THREAD_LIMIT": "1"}
NO_ENGINE = f"no OCR engine: Tesseract is not installed ({INSTALL})"


class OcrPage(BaseModel):
    text: str
    confidence: float | None  # mean word confidence 0–100, None when no word was found


class OcrUnavailable(RuntimeError):
    """No engine, or not the languages asked for: the file is skipped with this reason, never an error."""


@cache
def _languages() -> frozenset[str]:
    import pytesseract

    return frozenset(pytesseract.get_languages(config=""))


def check_engine(languages: str) -> None:
    """Raise ``OcrUnavailable`` (with the install command) unless Tesseract and every language are here."""
    if shutil.which("tesseract") is None:
        raise OcrUnavailable(NO_ENGINE)
    missing = [lang for lang in languages.split("+") if lang not in _languages()]
    if missing:
        packages = " ".join(f"tesseract-ocr-{lang}" for lang in missing)
        raise OcrUnavailable(
            f"no OCR engine: Tesseract lacks the languages {', '.join(missing)} (apt-get install {packages})"
        )


def read_image(image: Image.Image, languages: str, timeout: float) -> OcrPage:
    """The page's text, line by line in Tesseract's reading order, and its words' mean confidence."""
    import pytesseract

    data = pytesseract.image_to_data(
        image.convert("L"), lang=languages, config="--psm 3", timeout=timeout, output_type=pytesseract.Output.DICT
    )
    lines: dict[tuple[int, int, int], list[str]] = {}  # (block, paragraph, line) → words
    confidences: list[float] = []
    for i, word in enumerate(data["text"]):
        confidence = float(data["conf"][i])
        if confidence < 0 or not word.strip():
            continue
        lines.setdefault((data["block_num"][i], data["par_num"][i], data["line_num"][i]), []).append(word)
        confidences.append(confidence)
    paragraphs: dict[tuple[int, int], list[str]] = {}
    for (block, par, _), words in lines.items():
        paragraphs.setdefault((block, par), []).append(" ".join(words))
    text = "\n\n".join("\n".join(par) for par in paragraphs.values())  # blank lines: the chunker's paragraphs
    return OcrPage(text=text, confidence=sum(confidences) / len(confidences) if confidences else None)
