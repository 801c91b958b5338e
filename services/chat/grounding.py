"""Grounding guard: does the vault answer the question, from which notes, and why.

The guard weighs evidence the search already computed for its best notes (no model call, no extra
search): the cosine of the best chunks, where the best note's chunk ranks in the dense and sparse lists,
the cosine of the question and the note's title, how much of the question's rare terms the note holds,
how far the best note is ahead of the next one, and whether the names the question capitalises occur in
the retrieved text. A logistic rule combines them; its weights are the embedding model's
(``embedding.Calibration.guard``), fitted on ``bench/grounding.py`` (docs/performance.md, "Grounding").
A paraphrase shares no word with its note but its cosine and title carry it; a neighbouring topic
shares words but neither the rare ones nor the cosine of the real answer.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from services.chat import reranked
from services.chat.grounding_check import CheckOutcome
from services.chat.outcome import Outcome, decide, logistic
from services.retrieval import lexical
from services.retrieval.embedding import DEFAULT_CALIBRATION, Calibration
from services.retrieval.query_terms import query_terms
from services.retrieval.search import SearchResult

_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-ZÀ-Ý][\w’'-]{2,})")
_PART_SPLIT = re.compile(r"\s*[,;]?\s+(?:et|ainsi que|and|as well as)\s+|\s*;\s*", re.IGNORECASE)
PART_TERMS = 2  # content terms each part of a two-part question needs (else "objectifs et durée" of one thing)
MAX_CANDIDATES = 3  # notes cited side by side when none leads
CLOSEST_NOTES = 5  # « pas sûr »: the closest notes whose best passage is shown
# A note the user opened or marked « c'était ça » for a question at least this close (cosine, e5) answers: above
# every pair of different needs bench/learning.py measured (0.928), so the same question asked again, or a
# slight rewording of it, answers from the note its user chose; farther ones only move the note up the list.
LEARNED_ANSWER = 0.93
EVIDENCE_NOTES = 3  # the best notes whose chunks the dense evidence reads
FEATURES = ("dense", "title", "coverage", "agreement", "margin", "names", "dense_lead", "title_lead")


@dataclass(frozen=True)
class Evidence:
    """What the search says about the question, each signal on a 0..1-ish scale."""

    dense: float  # best cosine of a chunk among the first notes
    title: float  # cosine between the question and the best note's title
    coverage: float  # share of the question's terms the best note holds, rare ones weighing more
    agreement: float  # the best note's chunk near the top of both lists: mean of 1/dense rank and 1/sparse rank
    margin: float  # fused score of the best note minus the next one's
    names: float  # share of the question's capitalised names found in the retrieved text (1.0 without names)
    dense_lead: float  # best chunk cosine minus the mean of the other notes' (an answer stands out)
    title_lead: float  # the best note's title cosine minus the mean of the other notes'

    def values(self) -> list[float]:
        return [getattr(self, name) for name in FEATURES]


@dataclass
class Grounding:
    """The chat's decision with its evidence, the notes it stands on, and the main note (or none)."""

    supported: bool  # the chat answers (``outcome`` is ``answer``)
    confidence: float  # calibrated probability that the answer's note is right (``services.chat.outcome``)
    evidence: Evidence
    results: list[SearchResult] = field(default_factory=list)  # the notes to answer from, best first
    main: SearchResult | None = None  # None with several notes of similar weight: cite them all
    candidates: list[SearchResult] = field(default_factory=list)  # notes of similar weight, when no main note
    missing_names: list[str] = field(default_factory=list)
    missing_parts: list[str] = field(default_factory=list)  # parts of a two-part question the vault lacks
    check: CheckOutcome | None = None  # the model's second check (``grounding_check``), when it ran
    outcome: Outcome = Outcome.REFUSED
    nearness: float = 0.0  # calibrated probability that the vault is about the question
    guard: float = 0.0  # the guard rule's probability that the vault answers (one signal of the two rules)
    known: float | None = None  # share of the question's words some note holds
    learned: float | None = None  # answered from the note the user chose for a question this close (cosine)
    answer_from: float = 0.5  # the confidence the chat answers from
    near_from: float = 0.25  # the nearness it shows the closest passages from (else it refuses)
    rankers: dict[str, object] = field(default_factory=dict)  # the models that ranked: embedding, reranker, its ms

    def explain(self) -> dict[str, object]:
        """The decision as plain data (``obsirag ask --explain``, the web's "pourquoi ces sources ?")."""
        return {
            "supported": self.supported,
            "outcome": self.outcome.value,
            "confidence": round(self.confidence, 3),
            "nearness": round(self.nearness, 3),
            "guard": round(self.guard, 3),
            "known": round(self.known, 3) if self.known is not None else None,
            "learned": round(self.learned, 3) if self.learned is not None else None,
            "answer_from": self.answer_from,
            "near_from": self.near_from,
            "evidence": {k: round(v, 3) for k, v in asdict(self.evidence).items()},
            "main_note": self.main.path if self.main else None,
            "candidates": [r.path for r in self.candidates],
            "missing_names": self.missing_names,
            "missing_parts": self.missing_parts,
            "check": self.check.explain() if self.check else None,
            "rankers": self.rankers,
        }


def content_terms(question: str) -> list[str]:
    return query_terms(question)


def names_in(question: str) -> list[str]:
    """Capitalised words past the sentence start: names worth finding in the vault (evidence, not a veto)."""
    return [m for m in _CAPITALISED.findall(question.strip()) if m.lower() not in {"je", "j'ai", "i"}]


def gather_evidence(question: str, results: list[SearchResult]) -> tuple[Evidence, list[str]]:
    """The guard's signals for ``results`` (the search's notes, best first), and the names none holds."""
    if not results:
        return Evidence(*[0.0] * len(FEATURES)), names_in(question)
    best = results[0]
    dense = max((r.dense_score for r in results[:EVIDENCE_NOTES] if r.dense_score is not None), default=0.0)
    cosines = sorted((r.dense_score for r in results if r.dense_score is not None), reverse=True)
    titles = [r.title_similarity or 0.0 for r in results]
    second = results[1].score if len(results) > 1 else 0.0
    haystack = lexical.fold_accents(" ".join(f"{r.title} {r.text}" for r in results).lower())
    names = names_in(question)
    missing = [n for n in names if lexical.fold_accents(n.lower()) not in haystack]
    evidence = Evidence(
        dense=dense,
        title=best.title_similarity or 0.0,
        coverage=rare_term_coverage(content_terms(question), results),
        agreement=(_inverse(best.dense_rank) + _inverse(best.sparse_rank)) / 2,
        margin=best.score - second,
        names=1.0 - len(missing) / len(names) if names else 1.0,
        dense_lead=cosines[0] - _mean(cosines[1:]) if len(cosines) > 1 else 0.0,  # no neighbour: no lead known
        title_lead=titles[0] - _mean(titles[1:]),
    )
    return evidence, missing


def rare_term_coverage(terms: list[str], results: list[SearchResult]) -> float:
    """Share of ``terms`` in the best result, each weighing 1 / (1 + the results holding it): a term every
    neighbour holds says little, a term only one note (or none) holds says which note answers."""
    if not terms or not results:
        return 0.0
    bags = [set(lexical.analyze(f"{r.title} {r.heading} {r.text}")) for r in results]
    weights = {t: 1.0 / (1 + sum(t in bag for bag in bags)) for t in terms}
    return sum(w for t, w in weights.items() if t in bags[0]) / sum(weights.values())


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _inverse(rank: int | None) -> float:
    return 1.0 / rank if rank else 0.0


def confidence(evidence: Evidence, calibration: Calibration) -> float:
    return logistic(calibration.guard_weights, calibration.guard_bias, evidence.values())


def assess(
    question: str,
    results: list[SearchResult],
    calibration: Calibration = DEFAULT_CALIBRATION,
    known: float | None = None,
) -> Grounding:
    """Decide whether ``results`` answer ``question`` (answer, closest passages or refusal: ``outcome``);
    if they answer, which notes to answer from and the main one. ``known``: ``SearchResponse.known``.

    The guard, the support share and the main note were fitted on notes in fused-score order; a model
    whose results are ordered otherwise (``SearchResult.rank_score``: a heavier title term, the opening
    chunk) is read in that order all the same, so its evidence does not move."""
    results = sorted(results, key=lambda r: -r.score)  # stable: equal scores keep the search's order
    evidence, missing = gather_evidence(question, results)
    guard = reranked.blend_guard(confidence(evidence, calibration), results)
    decision = decide([*evidence.values(), 1.0 if known is None else known, guard], guard, calibration)
    grounding = Grounding(
        decision.outcome == Outcome.ANSWER,
        decision.confidence,
        evidence,
        missing_names=missing,
        outcome=decision.outcome,
        nearness=decision.nearness,
        guard=guard,
        known=known,
        answer_from=decision.answer_from,
        near_from=decision.near_from,
    )
    if results and (results[0].learned_similarity or 0.0) >= LEARNED_ANSWER:
        return _from_learned(grounding, results, calibration)
    if grounding.supported and any(r.learned for r in results):
        # A mark moved notes of this list: the places' scores (margin, lead) are no longer the notes' own evidence,
        # so a farther question is shown its closest notes (the marked one first), never answered on borrowed scores.
        grounding.supported, grounding.outcome = False, Outcome.CLOSEST
    if grounding.supported and reranked.reranked(results):
        grounding.results = reranked.supporting(results, calibration.support_share)
        grounding.main, grounding.candidates = reranked.main_note(grounding.results, MAX_CANDIDATES)
    elif grounding.supported:
        grounding.results = [r for r in results if r.score >= results[0].score * calibration.support_share]
        grounding.main, grounding.candidates = select_main_note(grounding.results, calibration.main_margin)
    elif grounding.outcome == Outcome.CLOSEST:
        grounding.results = results[:CLOSEST_NOTES]
    return grounding


def _from_learned(grounding: Grounding, results: list[SearchResult], calibration: Calibration) -> Grounding:
    """The user chose ``results[0]`` for a question this close: the answer rests on it, as its main note."""
    best = results[0]
    grounding.learned = best.learned_similarity
    grounding.supported, grounding.outcome = True, Outcome.ANSWER
    grounding.confidence = max(grounding.confidence, best.learned_similarity or 0.0)
    grounding.results = [best, *(r for r in results[1:] if r.score >= best.score * calibration.support_share)]
    grounding.main, grounding.candidates = best, []
    return grounding


def select_main_note(
    supporting: list[SearchResult], margin: float = DEFAULT_CALIBRATION.main_margin
) -> tuple[SearchResult | None, list[SearchResult]]:
    """The note the answer is mostly about: the best note when it leads the next by ``margin`` (fused
    score); otherwise no main note, and the notes within ``margin`` of the best are the candidates to cite.
    OCR text read with low confidence (``ocr_low``) is cited, never the main note."""
    if not supporting:
        return None, []
    close = [r for r in supporting[1:] if supporting[0].score - r.score < margin]
    if not close and not supporting[0].ocr_low:
        return supporting[0], []
    return None, [supporting[0], *close][:MAX_CANDIDATES]


def split_question(question: str) -> list[str]:
    """The two parts of a question that asks two things ("le budget d'Atlas et la recette de la tatin"),
    or nothing when it asks one (either side too thin to stand alone)."""
    pieces = _PART_SPLIT.split(question.strip(), maxsplit=1)
    if len(pieces) != 2 or any(len(content_terms(piece)) < PART_TERMS for piece in pieces):
        return []
    return [piece.strip(" ?!.") for piece in pieces]


def combine_parts(whole: Grounding, parts: list[tuple[str, Grounding]]) -> Grounding:
    """The decision for a two-part question from the guard on the whole and on each part: both parts
    found → answer from both notes (cited side by side, no single main note); one part found → answer
    that part from its notes and name the other as missing; none → the whole question's decision."""
    found = [(text, g) for text, g in parts if g.supported]
    if not found:
        return whole
    if len(found) == 1:
        part = found[0][1]
        part.missing_parts = [other for other, g in parts if not g.supported]
        return part
    bests = list({g.results[0].path: g.results[0] for _, g in found}.values())
    base = whole if whole.supported else found[0][1]
    base.supported, base.outcome = True, Outcome.ANSWER
    base.results = bests + [r for r in base.results if r.path not in {b.path for b in bests}]
    if len(bests) > 1:
        base.main, base.candidates = None, bests
    return base
