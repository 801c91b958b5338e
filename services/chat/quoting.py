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
from dataclasses import dataclass, replace
from functools import partial

from services.catalog.models import SCREENSHOT_LABEL, Source
from services.chat import kinds, prompts
from services.chat.context import ContextBlock
from services.chat.grounding import Grounding, content_terms
from services.chat.passages import Passage, Unit, chunk_passage, note_passages, telling_units, units_of
from services.config import Settings
from services.indexing.chunking import embedding_prefix
from services.llm.degeneration import PHRASE_WORDS, words_of
from services.retrieval.search import SearchResult

log = logging.getLogger(__name__)
ScoreFn = Callable[[str, list[str]], list[float]]  # (question, sentences) → cosine of each
MAX_SCORED = 16  # units scored per question: their embedding is most of what a first question waits for
CLOSEST_UNITS = 3  # « pas sûr »: units of each closest note's best chunk scored (five notes: 15 embeddings)
OTHER_NOTES, OTHER_UNITS = 2, 2  # notes besides the main one whose best chunk may be quoted, units of each
SCORED_CHARS = 200  # of a unit, what is embedded: its start says what it is about
SECTION_CHARS = 600  # of a section, what is embedded to rank it among its note's sections
MAX_PASSAGES = 3
MAX_UNITS = 6  # quoted per passage
KEEP_MARGIN = 0.035  # a unit this close to its passage's best is quoted too
OTHER_MARGIN = 0.015  # another passage is quoted when its best unit is this close to the answer's best
LEAD_MARGIN = 0.06  # the main note's opening is quoted before its best section when this close to it
WHOLE_LIST = 6  # a list or table this short is quoted whole once one of its items is
LEAD_UNITS, LEAD_CHARS = 2, 240  # a summary's quote of each note: its opening sentences
PERIOD_NOTES = 12  # a period's notes listed one by one, then « et N autres »
LEXICAL_WEIGHT = 0.08  # the question's rare terms in a unit, against cosines that spread over ~0.1
TROUBLE_WEIGHT = 0.03  # a troubles section's units, for a problem asked (``kinds.asks_trouble``)
_NOT_A_LIST = re.compile(r"^(\d+)([.)]\s)")  # « 2. Le bokashi », a heading: escaped, no list starts
_TRAILING_TAGS = re.compile(r"(?:\s+#[\w/-]+|\s+\^[\w-]+)+\s*$")


@dataclass
class Quote:
    text: str
    sources: list[Source]
    said: str = ""  # the quoted units' plain text: what the answer can claim to cover (``kinds.uncovered``)


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
    scored = _score(_passages(settings, question, grounding, score), question, grounding.results, score)
    chosen = _without_repeats(_choose(scored))
    sources, quotes = [], []
    for n, (passage, units) in enumerate(chosen, start=1):
        sources.append(_source(passage, n, passage.primary))
        quotes.append(_render(passage, units, n, language))
    lines = [prompts.QUOTED_INTRO[language], *quotes, *_missing_names(grounding, language)]
    said = " ".join(unit.plain for _, units in chosen for unit in units)
    return Quote("\n\n".join(lines), sources, said)


def quote_closest(
    settings: Settings, question: str, language: str, grounding: Grounding, score: ScoreFn | None
) -> Quote:
    """« Pas sûr »: the best unit of each closest note, each cited, none given as the answer. The first note's
    sections are ranked as a main note's are (its answering section, not only its best chunk); the others
    offer their best chunk."""
    if not grounding.results:
        return Quote(prompts.CLOSEST_INTRO[language], [])
    first, *others = grounding.results
    lead = replace(grounding, main=first, candidates=[], results=[first])
    passages = _passages(settings, question, lead, score) or [chunk_passage(first)]
    asked = set(content_terms(question))
    for result in others:
        passage = chunk_passage(result)
        # A chunk of code or of a lone link has no sentence to quote: its snippet stands in, never dropped.
        stand_in = [Unit(result.snippet or result.title, "sentence", 0)]
        passage.units = telling_units(passage.units, asked, CLOSEST_UNITS) or stand_in
        passages.append(passage)
    best: dict[str, _Scored] = {}
    for item in _score([p for p in passages if p.units], question, grounding.results, score):
        if item.passage.path not in best or item.best > best[item.passage.path].best:
            best[item.passage.path] = item
    sources, quotes = [], []
    for n, item in enumerate((best[r.path] for r in grounding.results if r.path in best), start=1):
        passage = item.passage
        unit = passage.units[max(range(len(item.scores)), key=item.scores.__getitem__)]
        sources.append(_source(passage, n, primary=False))
        quotes.append(_render(passage, [unit], n, language))
    return Quote("\n\n".join([prompts.CLOSEST_INTRO[language], *quotes, *_missing_names(grounding, language)]), sources)


def _missing_names(grounding: Grounding, language: str) -> list[str]:
    """The line saying which names the question asks about no retrieved note holds (none when all are held)."""
    if not grounding.missing_names:
        return []
    names = ", ".join(f"« {name} »" for name in grounding.missing_names)
    return [prompts.QUOTED_MISSING[language].format(names=names)]


def _source(passage: Passage, n: int, primary: bool) -> Source:
    """The citation ``[n]`` of a quoted passage: its note at its heading (a document at its page)."""
    return Source(
        n=n,
        title=passage.title,
        path=passage.path,
        heading=passage.heading,
        primary=primary,
        page=passage.page,
        screenshot=passage.screenshot,
    )


def _passages(settings: Settings, question: str, grounding: Grounding, score: ScoreFn | None) -> list[Passage]:
    """The main note's sections (each candidate's when no note leads; the closest to the question first), then
    other notes' best chunks (their units holding the question's terms), ``MAX_SCORED`` units in all."""
    leads = [grounding.main] if grounding.main else grounding.candidates or grounding.results[:1]
    asked = set(content_terms(question))
    passages: list[Passage] = []
    closeness = partial(_closeness, question, score)
    share = (MAX_SCORED - OTHER_NOTES * OTHER_UNITS) // max(1, len(leads))
    for result in leads:
        for passage in note_passages(settings, result, share, asked, closeness):
            passage.primary = grounding.main is not None
            passages.append(passage)
    lead_paths = {r.path for r in leads}
    others = [chunk_passage(r) for r in grounding.results if r.path not in lead_paths][:OTHER_NOTES]
    for passage in others:
        passage.units = telling_units(passage.units, asked, OTHER_UNITS)
    return [p for p in passages + others if p.units]


def _closeness(question: str, score: ScoreFn | None, sections: list[Passage]) -> list[float]:
    """Each section read as the index reads a chunk (title and heading, then its text), and a troubles
    section for a problem asked (``_score``): which of a note's sections to score first."""
    texts = [embedding_prefix(p.title, p.heading.split(" > ")) + " ".join(u.plain for u in p.units) for p in sections]
    cosines = _scored_or_zero(question, [t[:SECTION_CHARS] for t in texts], score, "a note's sections")
    return [c + _trouble_bonus(question, p) for c, p in zip(cosines, sections, strict=True)]


def _trouble_bonus(question: str, passage: Passage) -> float:
    """A problem asked: the note's section of troubles answers it, though the model reads the words the
    question shares with another section (« carottes » in « Mes essais réussis »)."""
    return TROUBLE_WEIGHT if kinds.asks_trouble(question) and kinds.lists_troubles(passage.heading) else 0.0


def _score(passages: list[Passage], question: str, results: list[SearchResult], score: ScoreFn | None) -> list[_Scored]:
    cosines = iter(_cosines(question, passages, score))
    weights = _term_weights(question, results)
    total = sum(weights.values()) or 1.0
    scored = []
    for passage in passages:
        titled = kinds.terms(passage.title)  # the note's name tells none of its sentences apart
        telling = {t: w for t, w in weights.items() if t not in titled}
        bonus = _trouble_bonus(question, passage)
        values = []
        for unit in passage.units:
            terms = kinds.terms(unit.plain)
            lexical_part = LEXICAL_WEIGHT * sum(w for t, w in telling.items() if t in terms) / total
            values.append(next(cosines) + lexical_part + bonus)
        scored.append(_Scored(passage, values))
    return scored


def _cosines(question: str, passages: list[Passage], score: ScoreFn | None) -> list[float]:
    """Each unit read under its note's title and heading, as the index reads a chunk: "Objectifs" then says
    what the list items below it are about."""
    texts = [
        embedding_prefix(p.title, p.heading.split(" > ")) + u.plain[:SCORED_CHARS] for p in passages for u in p.units
    ]
    return _scored_or_zero(question, texts, score, "the quoted sentences")


def _scored_or_zero(question: str, texts: list[str], score: ScoreFn | None, what: str) -> list[float]:
    if score is None or not texts:
        return [0.0] * len(texts)
    try:
        scores = list(score(question, texts))
        # The scorer reads at most ``sentence_scores.MAX_SENTENCES`` (a note of 100 sections): the rest rank by terms.
        return scores + [0.0] * (len(texts) - len(scores))
    except Exception:  # the indexer slow or gone: the terms alone choose
        log.warning("scoring %s failed; choosing by their terms", what, exc_info=True)
        return [0.0] * len(texts)


def _term_weights(question: str, results: list[SearchResult]) -> dict[str, float]:
    """The question's terms, a term held by fewer retrieved notes weighing more (as the guard weighs them)."""
    bags = [kinds.terms(f"{r.title} {r.heading} {r.text}") for r in results]
    return {t: 1.0 / (1 + sum(t in bag for bag in bags)) for t in map(kinds.term, content_terms(question))}


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
    """The units as a block quote keeping their blocks (a list, then a new paragraph; a gap between two as
    « […] »), then where they come from and ``[n]``."""
    blocks: list[str] = []
    previous: Unit | None = None
    for unit in units:
        text = _TRAILING_TAGS.sub("", unit.text)
        follows = previous is not None and passage.units.index(previous) == passage.units.index(unit) - 1
        if previous is not None and not follows:
            blocks.append("[…]")
        if previous is not None and follows and unit.group == previous.group and unit.kind == previous.kind:
            # one paragraph's sentences run on; one list's items are lines of that list
            blocks[-1] += f" {text}" if unit.kind == "sentence" else f"\n{_item(unit, text)}"
        else:
            blocks.append(_item(unit, text) if unit.kind != "sentence" else _NOT_A_LIST.sub(r"\1\\\2", text))
        previous = unit
    heading = passage.heading.split(" > ")[-1] if passage.heading else ""
    where = f"{passage.title} › {heading}" if heading and heading != passage.title else passage.title
    where += f", p. {passage.page}" if passage.page is not None else ""  # « Manuel.pdf, p. 12 »
    if passage.screenshot:  # an image's OCR text says so: « capture d'écran : Réglages.png »
        where = SCREENSHOT_LABEL.get(language, SCREENSHOT_LABEL["fr"]) + passage.title
    # a blank quoted line between blocks: no paragraph runs into the list item before it
    quoted = "\n>\n".join("\n".join(f"> {line}" for line in block.split("\n")) for block in blocks)
    return f"{quoted}\n\n— {where} [{n}]"


def _item(unit: Unit, text: str) -> str:
    return f"- {text}" if unit.kind == "row" else text


def quote_notes(blocks: list[ContextBlock], language: str) -> str:
    """A period's notes in their order (newest first), each with its date, opening sentences and ``[n]``: a
    summary without a model; past ``PERIOD_NOTES``, how many more (all are among the sources)."""
    lines = [prompts.QUOTED_SUMMARY[language]]
    for block in blocks[:PERIOD_NOTES]:
        lead, size = [], 0
        for unit in units_of(block.text)[:LEAD_UNITS]:
            if size and size + len(unit.plain) > LEAD_CHARS:
                break
            lead.append(unit.plain)
            size += len(unit.plain)
        when = _when(block, language)
        said = f" : « {' '.join(lead)} »" if lead else ""
        lines.append(f"- **{block.title}** [{block.n}]{when}{said}")
    if len(blocks) > PERIOD_NOTES:
        lines.append(prompts.MORE_NOTES[language].format(count=len(blocks) - PERIOD_NOTES))
    return "\n".join(lines)


def _when(block: ContextBlock, language: str) -> str:
    """The note's date after its title, unless the title says it (a daily note, « 2026-11-25 »)."""
    if block.dated is None or block.dated.strftime("%Y-%m-%d") in block.title:
        return ""
    return f", {block.dated.strftime(prompts.NOTE_DATE[language])}"
