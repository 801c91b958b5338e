"""Accuracy of the language detector (``services.language.detect``) on questions whose language is known.

    .venv/bin/python bench/language_detection.py [-v]

Sets: the Obsidian help questions (``bench/obsidian_help_questions.jsonl``, each with ``lang``), the grounding
bench's questions (``bench/_grounding_sets.py``), the English CNIL questions (``_cross_lingual.CNIL_EN``) and
the CNIL / Service-Public French questions, and the short keyword queries of ``tests/language/keyword_queries.py``.
``-v`` lists the misses.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import _grounding_sets as sets
from _beir import SHARED_BENCH
from _cross_lingual import CNIL_EN

from services.language.detect import detect_language
from tests.language.keyword_queries import ENGLISH, FRENCH

ROOT = Path(__file__).resolve().parent.parent


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def question_sets() -> dict[str, list[tuple[str, str]]]:
    grounding = [q for value in vars(sets).values() if isinstance(value, list) for q in value]
    found = {
        "obsidian help": [(q["question"], q["lang"]) for q in _jsonl(ROOT / "bench" / "obsidian_help_questions.jsonl")],
        "grounding sets": list(dict.fromkeys((q.text, q.language) for q in grounding if isinstance(q, sets.Question))),
        "CNIL, English": [(text, "en") for text in CNIL_EN.values()],
        "keyword queries": [(text, "en") for text in ENGLISH] + [(text, "fr") for text in FRENCH],
    }
    for name in ("cnil-fr", "spf-fr"):
        path = SHARED_BENCH / name / "queries.jsonl"
        if path.exists():
            found[f"{name} questions"] = [(q["text"], "fr") for q in _jsonl(path)]
    return found


def main(argv: list[str]) -> int:
    print("| set | questions | correct | accuracy |\n|---|---:|---:|---:|")
    misses = []
    for name, rows in question_sets().items():
        wrong = [(text, language) for text, language in rows if detect_language(text) != language]
        misses += [(name, *row) for row in wrong]
        right = len(rows) - len(wrong)
        print(f"| {name} | {len(rows)} | {right} | {right / len(rows):.3f} |")
    if "-v" in argv:
        for name, text, language in misses:
            print(f"  miss ({name}, {language}): {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
