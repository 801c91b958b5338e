"""Writes services/language/trigrams.json: the character trigrams of French and English words, for the detector.

    .venv/bin/python bench/language_profiles.py

French: the CNIL FAQ (``../shared/eval/bench/cnil-fr``) and the sample vault's French notes. English: this
repository's docs and README (lines quoting French left out) and the sample vault's English notes. Keeps the
``TOP`` most frequent trigrams of each language with their counts (2,000: keyword lists 0.90 with 1,000, 0.96
with 2,000, 0.94 with 3,000; bench/language_detection.py).
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

from _common import SAMPLE_VAULT

from services.language.detect import PROFILES, word_trigrams

ROOT = Path(__file__).resolve().parent.parent
CNIL = ROOT.parent / "shared" / "eval" / "bench" / "cnil-fr" / "corpus.jsonl"
TOP = 2000
_FRENCH_MARKS = re.compile(r"[«»éèàçêù]")


def french_text() -> str:
    docs = [json.loads(line) for line in CNIL.read_text(encoding="utf-8").splitlines()]
    notes = [p.read_text(encoding="utf-8") for p in sorted(SAMPLE_VAULT.rglob("*.md")) if "English" not in p.parts]
    return " ".join([f"{d['title']} {d['text']}" for d in docs] + notes)


def english_text() -> str:
    files = [
        *sorted((ROOT / "docs").glob("*.md")),
        ROOT / "README.md",
        *sorted((SAMPLE_VAULT / "English").glob("*.md")),
    ]
    lines = (line for f in files for line in f.read_text(encoding="utf-8").splitlines())
    return " ".join(line for line in lines if not _FRENCH_MARKS.search(line))


def profile(text: str) -> list[tuple[str, int]]:
    counts = Counter(gram for gram in word_trigrams(text))
    return counts.most_common(TOP)


def main() -> int:
    data = {"fr": profile(french_text()), "en": profile(english_text())}
    PROFILES.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{PROFILES}: {TOP} trigrams per language")
    return 0


if __name__ == "__main__":
    sys.exit(main())
