"""The questions of ``bench/outcomes.py`` and what each response is scored on.

Sets: the Obsidian Help development set (``_obsidian_help.py``: paraphrased and typed questions answerable,
near-domain, far-off, and the shared far-off set), the sample vault's written set (``_grounding_sets.py``)
and, with ``--corpus``, the CNIL / Service-Public halves (``_vaults.py``: a query answerable in the half
holding its documents, near-domain in the other). Held out: one question in three, by a hash of its first
gold note (of its text without one), the split ``bench/grounding.py`` uses.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from _beir import Benchmark
from _grounding_sets import FAR, SAMPLE_VAULT
from _obsidian_help import load_questions, open_help_vault
from _vaults import HalfIndex, half_of, is_held_out, open_folder

from services.retrieval.embedding import Embedder

ROOT = Path(__file__).resolve().parent.parent
RunIndex = Callable[[HalfIndex, Embedder, list["OutcomeRow"]], list["OutcomeRow"]]
HOLD_SHARE = 0.8  # an evidence string is held when this share of its words stand in the answer, in order-free form


@dataclass
class OutcomeRow:
    vault: str
    set_kind: str  # answerable, near, far
    lang: str
    question: str
    gold: list[str]
    held_out: bool
    evidence: list[str] = field(default_factory=list)  # the gold note's answering sentence(s), when annotated
    kind: str = ""  # the response: quoted, written, closest, refused, listing…
    confidence: float = 0.0
    nearness: float = 0.0
    main: str | None = None
    best: str | None = None  # the guard's best note (what the answer would rest on)
    candidates: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    search_top5: list[str] = field(default_factory=list)
    values: list[float] = field(default_factory=list)  # ``OUTCOME_FEATURES``
    answer: str = ""
    holds: bool | None = None
    ms: float = 0.0

    @property
    def answerable(self) -> bool:
        return self.set_kind == "answerable"

    @property
    def answered(self) -> bool:
        return self.kind in ("quoted", "written")

    @property
    def found(self) -> bool:
        return bool(set(self.search_top5) & set(self.gold))

    @property
    def gold_shown(self) -> bool:
        return bool(set(self.sources) & set(self.gold))

    @property
    def main_right(self) -> bool:
        """The note the answer rests on is a gold note (with no main note: one of the notes cited side by side)."""
        if self.main:
            return self.main in self.gold
        return bool(set(self.candidates or self.sources[:1]) & set(self.gold))

    @property
    def confidently_wrong(self) -> bool:
        return self.answered and not self.main_right and not self.gold_shown


KEYWORDS = ROOT / "bench" / "obsidian_help_keywords.jsonl"  # questions in the notes' own words (fr, en)


def help_vault_rows(embedder: Embedder, cache: Path, run: RunIndex) -> list[OutcomeRow]:
    kinds = {"paraphrase": "answerable", "typo": "answerable", "near": "near", "far": "far"}
    keywords = [
        OutcomeRow("help keywords", "answerable", q.lang, q.text, list(q.gold), is_held_out(q.gold[0]))
        for q in load_questions(KEYWORDS)
    ]
    rows = [
        OutcomeRow(
            "help",
            kinds[q.kind],
            q.lang,
            q.text,
            list(q.gold),
            is_held_out(q.gold[0] if q.gold else q.text),
            evidence=list(q.evidence),
        )
        for q in load_questions()
        if q.kind in kinds
    ]
    rows += [OutcomeRow("help", "far", q.language, q.text, [], is_held_out(q.text)) for q in FAR]
    return run(open_help_vault(embedder, cache), embedder, rows + keywords)


def sample_vault_rows(embedder: Embedder, cache: Path, run: RunIndex) -> list[OutcomeRow]:
    index = open_folder("sample-vault", ROOT / "examples" / "vault", embedder, cache)
    rows = [OutcomeRow("sample", q.kind, q.language, q.text, list(q.gold), is_held_out(q.text)) for q in SAMPLE_VAULT]
    return run(index, embedder, rows)


def asked_questions(bench: Benchmark, half: str) -> list[OutcomeRow]:
    rows = []
    for qid, text in bench.queries.items():
        relevant = sorted(bench.qrels[qid])
        halves = {half_of(doc) for doc in relevant}
        if len(halves) > 1:
            continue
        kind = "answerable" if halves == {half} else "near"
        rows.append(OutcomeRow(bench.name, kind, "fr", text, relevant, is_held_out(relevant[0])))
    rows += [OutcomeRow(bench.name, "far", q.language, q.text, [], is_held_out(q.text)) for q in FAR]
    return rows


def _words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKD", text.lower())
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    return re.findall(r"[a-z0-9]+", folded)


def holds(answer: str, evidence: list[str]) -> bool:
    """Whether ``answer`` holds one of the ``evidence`` strings: ``HOLD_SHARE`` of its words (Markdown, quotes
    and accents aside) in the answer."""
    said = set(_words(answer))
    for text in evidence:
        words = _words(text)
        if words and sum(w in said for w in words) / len(words) >= HOLD_SHARE:
            return True
    return False
