"""Quoted answers: the sentences of the notes that answer the question, when the model is too small to write.

The grounding guard has found the notes (the main note first); their sections are cut into units
(``services.chat.passages``) and each unit is scored by meaning (the indexer's embedding model, through
``score``) and by the question's rare terms the guard weighs (``grounding.rare_term_coverage``'s weights).
The best units are quoted as written, a list whole with the sentence announcing it, each passage with its
citation ``[n]`` (a source at its heading), framed in the question's language, what is missing said plainly.
No model runs: the answer is there as soon as the search is.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from services.catalog.models import SCREENSHOT_LABEL, Source
from services.chat import prompts
from services.chat.context import ContextBlock
from services.chat.grounding import Grounding, content_terms
from services.chat.passages import Passage, Unit, chunk_passage, note_passages, telling_units, units_of
from services.config import Settings
from services.indexing.chunking import embedding_prefix
from services.llm.degeneration import PHRASE_WORDS, words_of
from services.retrieval import lexical
from services.retrieval.search import SearchResult

log = logging.getLogger(__name__)
ScoreFn = Callable[[str, list[str]], list[float]]  # (question, sentences) → cosine of each
MAX_SCORED = 16  # units scored per question: their embedding is most of what a first question waits for
CLOSEST_UNITS = 3  # « pas sûr »: units of each closest note's best chunk scored (five notes: 15 embeddings)
OTHER_NOTES, OTHER_UNITS = 2, 2  # notes besides the main one whose best chunk may be quoted, units of each
SCORED_CHARS = 200  # of a unit, what is embedded: its start says what it is about
MAX_PASSAGES = 3
MAX_UNITS = 6  # quoted per passage
KEEP_MARGIN = 0.035  # a unit this close to its passage's best is quoted too
OTHER_MARGIN = 0.015  # another passage is quoted when its best unit is this close to the answer's best
LEAD_MARGIN = 0.06  # the main note's opening is quoted before its best section when this close to it
WHOLE_LIST = 6  # a list or table this short is quoted whole once one of its items is
LEAD_UNITS, LEAD_CHARS = 2, 240  # a summary's quote of each note: its opening sentences
LEXICAL_WEIGHT = 0.08  # the question's rare terms in a unit, against cosines that spread over ~0.1
_TRAILING_TAGS = re.compile(r"(?:\s+#[\w/-]+|\s+\^[\w-]+)+\s*$")


@dataclass
class Quote:
    text: str
    sources: list[Source]


@dataclass
class _Scored:
    passage: Passage
    scores: list[float]

    @property
    def best(self) -> float:
        return max(self.scores, default=0.0)


def quote_answer(
    settings: Settings, question: str, language: str, grounding: Grounding, score: ScoreFn | None
) -> Quote:
    """The passages of ``grounding``'s notes that answer ``question``, quoted with their citations."""
    scored = _score(_passages(settings, question, grounding), question, grounding.results, score)
    chosen = _without_repeats(_choose(scored))
    sources, quotes = [], []
    for n, (passage, units) in enumerate(chosen, start=1):
        sources.append(
            Source(
                n=n,
                title=passage.title,
                path=passage.path,
                heading=passage.heading,
                primary=passage.primary,
                page=passage.page,
                screenshot=passage.screenshot,
            )
        )
        quotes.append(_render(passage, units, n, language))
    lines = [prompts.QUOTED_INTRO[language], *quotes]
    if grounding.missing_names:
        names = ", ".join(f"« {name} »" for name in grounding.missing_names)
        lines.append(prompts.QUOTED_MISSING[language].format(names=names))
    return Quote("\n\n".join(lines), sources)


def quote_closest(question: str, language: str, grounding: Grounding, score: ScoreFn | None) -> Quote:
    """« Pas sûr »: the best unit of each closest note's best chunk, each cited, none given as the answer."""
    asked = set(content_terms(question))
    passages = [chunk_passage(r) for r in grounding.results]
    for passage, result in zip(passages, grounding.results, strict=True):
        # A chunk of code or of a lone link has no sentence to quote: its snippet stands in, never dropped.
        passage.units = telling_units(passage.units, asked, CLOSEST_UNITS) or [
            Unit(result.snippet or result.title, "sentence", 0)
        ]
    scored = _score(passages, question, grounding.results, score)
    sources, quotes = [], []
    for n, item in enumerate(scored, start=1):
        best = max(range(len(item.scores)), key=item.scores.__getitem__)
        passage = item.passage
        sources.append(
            Source(
                n=n,
                title=passage.title,
                path=passage.path,
                heading=passage.heading,
                page=passage.page,
                screenshot=passage.screenshot,
            )
        )
        quotes.append(_render(passage, [passage.units[best]], n, language))
    if grounding.missing_names:  # a name the question asks about and no close note holds
        names = ", ".join(f"« {name} »" for name in grounding.missing_names)
        quotes.append(prompts.QUOTED_MISSING[language].format(names=names))
    return Quote("\n\n".join([prompts.CLOSEST_INTRO[language], *quotes]), sources)


def _passages(settings: Settings, question: str, grounding: Grounding) -> list[Passage]:
    """The main note's sections (each candidate's when no note leads), then other notes' best chunks (their
    units holding the question's terms), ``MAX_SCORED`` units in all."""
    leads = [grounding.main] if grounding.main else grounding.candidates or grounding.results[:1]
    asked = set(content_terms(question))
    passages: list[Passage] = []
    share = (MAX_SCORED - OTHER_NOTES * OTHER_UNITS) // max(1, len(leads))
    for result in leads:
        for passage in note_passages(settings, result, share, asked):
            passage.primary = grounding.main is not None
            passages.append(passage)
    lead_paths = {r.path for r in leads}
    others = [chunk_passage(r) for r in grounding.results if r.path not in lead_paths][:OTHER_NOTES]
    for passage in others:
        passage.units = telling_units(passage.units, asked, OTHER_UNITS)
    return [p for p in passages + others if p.units]


def _score(passages: list[Passage], question: str, results: list[SearchResult], score: ScoreFn | None) -> list[_Scored]:
    cosines = iter(_cosines(question, passages, score))
    weights = _term_weights(question, results)
    total = sum(weights.values()) or 1.0
    scored = []
    for passage in passages:
        titled = set(lexical.analyze(passage.title))  # the note's name tells none of its sentences apart
        telling = {t: w for t, w in weights.items() if t not in titled}
        values = []
        for unit in passage.units:
            terms = set(lexical.analyze(unit.plain))
            values.append(next(cosines) + LEXICAL_WEIGHT * sum(w for t, w in telling.items() if t in terms) / total)
        scored.append(_Scored(passage, values))
    return scored


def _cosines(question: str, passages: list[Passage], score: ScoreFn | None) -> list[float]:
    """Each unit read under its note's title and heading, as the index reads a chunk: "Objectifs" then says
    what the list items below it are about."""
    texts = [
        embedding_prefix(p.title, p.heading.split(" > ")) + u.plain[:SCORED_CHARS] for p in passages for u in p.units
    ]
    if score is None or not texts:
        return [0.0] * len(texts)
    try:
        return list(score(question, texts))
    except Exception:  # the indexer slow or gone: the terms alone choose
        log.warning("scoring the quoted sentences failed; choosing them by their terms", exc_info=True)
        return [0.0] * len(texts)


def _term_weights(question: str, results: list[SearchResult]) -> dict[str, float]:
    """The question's terms, a term held by fewer retrieved notes weighing more (as the guard weighs them)."""
    bags = [set(lexical.analyze(f"{r.title} {r.heading} {r.text}")) for r in results]
    return {t: 1.0 / (1 + sum(t in bag for bag in bags)) for t in content_terms(question)}


def _choose(scored: list[_Scored]) -> list[tuple[Passage, list[Unit]]]:
    """The best passage of the main note, then passages of other notes close to it; main note first."""
    if not scored:
        return []
    best = max(s.best for s in scored)
    leading = [s for s in scored if s.passage.primary] or scored
    first = max(leading, key=lambda s: s.best)
    picked = [first]
    opening = next((s for s in leading if s.passage.lead and s.passage.path == first.passage.path), None)
    if opening is not None and opening is not first and opening.best >= first.best - LEAD_MARGIN:
        picked.insert(0, opening)  # what the note is about, then the section that answers
    others = sorted((s for s in scored if s.passage.path != first.passage.path), key=lambda s: -s.best)
    for candidate in others:
        seen = {p.passage.path for p in picked}
        if len(picked) < MAX_PASSAGES and candidate.passage.path not in seen and candidate.best >= best - OTHER_MARGIN:
            picked.append(candidate)
    return [(s.passage, _units_to_quote(s)) for s in picked]


def _without_repeats(chosen: list[tuple[Passage, list[Unit]]]) -> list[tuple[Passage, list[Unit]]]:
    """No unit sharing an 8-word phrase with one quoted before it (notes that copy each other, a boilerplate
    paragraph): an answer never says the same thing twice; a passage left empty goes."""
    seen: set[tuple[str, ...]] = set()
    kept = []
    for passage, units in chosen:
        fresh = [u for u in units if not _phrases(u) & seen]
        for unit in fresh:
            seen |= _phrases(unit)
        if fresh:
            kept.append((passage, fresh))
    return kept


def _phrases(unit: Unit) -> set[tuple[str, ...]]:
    words = words_of(unit.plain)
    return {tuple(words[i : i + PHRASE_WORDS]) for i in range(len(words) - PHRASE_WORDS + 1)}


def _units_to_quote(scored: _Scored) -> list[Unit]:
    """The passage's best unit, those close to it, each short list whole with its announcing sentence."""
    units, scores = scored.passage.units, scored.scores
    top = max(range(len(units)), key=scores.__getitem__)
    keep = {i for i, s in enumerate(scores) if s >= scores[top] - KEEP_MARGIN} | {top}
    for i in sorted(keep):
        group = [j for j, u in enumerate(units) if u.group == units[i].group]
        if units[i].kind != "sentence" and len(group) <= WHOLE_LIST:
            keep |= set(group)
            if group[0] > 0 and units[group[0] - 1].intro:
                keep.add(group[0] - 1)
        if units[i].intro:  # what it announces follows
            keep |= {j for j, u in enumerate(units) if u.group == units[i].group + 1 and u.kind != "sentence"}
    ordered = sorted(keep, key=lambda i: (i != top and scores[i] < scores[top] - KEEP_MARGIN, i))
    return [units[i] for i in sorted(ordered[: max(MAX_UNITS, 1)])]


def _render(passage: Passage, units: list[Unit], n: int, language: str = "fr") -> str:
    """The units as a block quote (a gap between two as « […] »), then where they come from and ``[n]``."""
    lines: list[str] = []
    previous: Unit | None = None
    for unit in units:
        text = _TRAILING_TAGS.sub("", unit.text)
        follows = previous is not None and passage.units.index(previous) == passage.units.index(unit) - 1
        if previous is not None and not follows:
            lines.append("[…]")
        if follows and unit.kind == previous.kind == "sentence" and unit.group == previous.group:  # type: ignore[union-attr]
            lines[-1] += f" {text}"
        else:
            lines.append(f"- {text}" if unit.kind == "row" else text)
        previous = unit
    heading = passage.heading.split(" > ")[-1] if passage.heading else ""
    where = f"{passage.title} › {heading}" if heading and heading != passage.title else passage.title
    where += f", p. {passage.page}" if passage.page is not None else ""  # « Manuel.pdf, p. 12 »
    if passage.screenshot:  # an image's OCR text says so: « capture d'écran : Réglages.png »
        where = SCREENSHOT_LABEL.get(language, SCREENSHOT_LABEL["fr"]) + passage.title
    quoted = "\n".join(f"> {line}" for line in lines)
    return f"{quoted}\n\n— {where} [{n}]"


def quote_notes(blocks: list[ContextBlock], language: str) -> str:
    """A period's notes, each with its opening sentences and ``[n]``: a summary without a model."""
    lines = [prompts.QUOTED_SUMMARY[language]]
    for block in blocks:
        lead, size = [], 0
        for unit in units_of(block.text)[:LEAD_UNITS]:
            if size and size + len(unit.plain) > LEAD_CHARS:
                break
            lead.append(unit.plain)
            size += len(unit.plain)
        said = f" : « {' '.join(lead)} »" if lead else ""
        lines.append(f"- **{block.title}** [{block.n}]{said}")
    return "\n".join(lines)
