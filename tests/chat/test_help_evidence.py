"""The Obsidian Help development set's evidence: each in-vault question says which sentence answers it.

``bench/quote_evidence.py`` measures whether the quoted answers hold it, and checks each string against the
vault itself; here only what the repository holds is read (the vault stays in ../shared).
"""

from __future__ import annotations

import json
from pathlib import Path

QUESTIONS = Path(__file__).resolve().parents[2] / "bench" / "obsidian_help_questions.jsonl"
ANSWERED_KINDS = ("paraphrase", "typo")  # "which" lists notes: no sentence answers it


def rows() -> list[dict]:
    return [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_each_in_vault_question_has_one_to_three_verbatim_evidence_strings() -> None:
    annotated = [r for r in rows() if r["kind"] in ANSWERED_KINDS]
    assert len(annotated) == 110
    for row in annotated:
        evidence = row.get("evidence")
        assert isinstance(evidence, list) and 1 <= len(evidence) <= 3, row["id"]
        assert all(isinstance(e, str) and len(e) >= 12 and e == e.strip() for e in evidence), row["id"]
        assert not any(e.startswith(("- ", "> ", "|")) for e in evidence), row["id"]  # the text, not its marker
        assert row.get("evidence_note", row["gold"][0]) in row["gold"], row["id"]


def test_questions_that_no_sentence_answers_have_no_evidence() -> None:
    others = [r for r in rows() if r["kind"] not in ANSWERED_KINDS]
    assert others and not any("evidence" in r for r in others)
