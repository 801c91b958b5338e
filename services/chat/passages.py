"""What a quoted answer can quote: a note's sections cut into sentences, list items and table rows.

A unit keeps its Markdown (bold, wikilinks) to be quoted as written, and a plain form for scoring. Units of
one paragraph, one list or one table share a ``group``: a quote takes a list whole, and the sentence that
announces it (ending with ":").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from services.config import Settings
from services.retrieval import lexical
from services.retrieval.search import SearchResult
from services.vault.items import read_source_if_readable

_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?…])\s+(?=[«\"(\[*_A-ZÀ-Ý0-9])")
_CALLOUT = re.compile(r"^\[![\w-]+\][+-]?\s*")
_WIKILINK = re.compile(r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
_MARKUP = re.compile(r"[*_`]+|\s\^[\w-]+$|(?<!\w)#(?=\w)")
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}")
_NUMBERED_HEADING = re.compile(r"^\s*\d+(?:\.\d+)*[.)]\s+\S.{0,100}(?<![.;:,!?])$")
MIN_UNIT_CHARS = 12  # "Voir aussi :", a lone link: nothing to quote
Closeness = Callable[[list["Passage"]], list[float]]  # sections → how close each is to the question
LEAD_UNITS = 2  # of a note's opening section, scored beside its best chunk's section


@dataclass(frozen=True)
class Unit:
    text: str  # as written in the note (Markdown), what the answer quotes
    kind: Literal["sentence", "item", "row"]
    group: int  # its paragraph, list or table within the passage
    intro: bool = False  # a sentence announcing what follows (ends with ":")

    @property
    def plain(self) -> str:
        """The unit without its Markdown: what is scored."""
        text = _WIKILINK.sub(lambda m: m.group(2) or m.group(1), _ITEM.sub("", self.text))
        return " ".join(_MARKUP.sub("", text).split())


@dataclass
class Passage:
    """A section of a note (or a chunk of it) as quotable units."""

    path: str
    title: str
    heading: str  # "Projet Atlas > Objectifs", as the search names a chunk's section
    units: list[Unit] = field(default_factory=list)
    primary: bool = False
    page: int | None = None  # a document's page (the search hit's): the quote cites it
    screenshot: bool = False  # an image's OCR text: cited « capture d'écran : … »
    lead: bool = False  # the note's opening (what it is about), scored beside its best section


def units_of(text: str, document: bool = False) -> list[Unit]:
    """The sentences, list items and table rows of a section's text, in order (code, embeds, headings left out).
    ``document``: text extracted from a PDF or slides, where « 2. Le bokashi » is a heading, not a list item."""
    units: list[Unit] = []
    blocks = _blocks(text)
    for group, block in enumerate(_split_headings(blocks) if document else blocks):
        lines = [_CALLOUT.sub("", line.lstrip("> ").rstrip()) for line in block]
        lines = [line for line in lines if line.strip()]
        if not lines or lines[0].startswith(("```", "~~~", "#", "![[", "![")):
            continue
        if lines[0].lstrip().startswith("|"):
            units += _rows(lines, group)
        elif _NUMBERED_HEADING.match(lines[0]) and len(lines) == 1 and document:
            units.append(Unit(lines[0].strip(), "sentence", group))  # a heading of its own, kept apart
        elif _ITEM.match(lines[0]):
            units += _items(lines, group)
        else:
            units += _sentences(" ".join(line.strip() for line in lines), group)
    return [u for u in units if len(u.plain) >= MIN_UNIT_CHARS]


def _blocks(text: str) -> list[list[str]]:
    """Blank-line separated blocks; a code block stays one block, a list right after a sentence is its own."""
    blocks: list[list[str]] = [[]]
    fenced = False
    for line in text.split("\n"):
        if line.strip().startswith(("```", "~~~")):
            fenced = not fenced
        if not fenced and not line.strip():
            blocks.append([])
            continue
        starts_list = bool(_ITEM.match(line)) and blocks[-1] and not _ITEM.match(blocks[-1][0])
        if not fenced and starts_list and not line.startswith((" ", "\t")):
            blocks.append([])
        blocks[-1].append(line)
    return [b for b in blocks if b]


def _split_headings(blocks: list[list[str]]) -> list[list[str]]:
    """Extracted text has no Markdown: a short numbered line without final punctuation, followed by prose (or
    alone), is a section heading on its own line, the prose after it its paragraph."""
    split: list[list[str]] = []
    for block in blocks:
        first, rest = block[0], block[1:]
        if _NUMBERED_HEADING.match(first) and not any(_ITEM.match(line) for line in rest):
            split += [[first], rest] if rest else [[first]]
        else:
            split.append(block)
    return split


def _sentences(paragraph: str, group: int) -> list[Unit]:
    pieces = [p.strip() for p in _SENTENCE_SPLIT.split(paragraph) if p.strip()]
    return [Unit(p, "sentence", group, intro=p.endswith(":")) for p in pieces]


def _items(lines: list[str], group: int) -> list[Unit]:
    items: list[str] = []
    for line in lines:
        if _ITEM.match(line) or not items:
            items.append(line.strip())
        else:  # a continuation line of the item above
            items[-1] += " " + line.strip()
    return [Unit(item, "item", group) for item in items]


def _rows(lines: list[str], group: int) -> list[Unit]:
    """Each row as "first cell — Header: cell; …" (a table cut into rows is no table to quote)."""
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
    header, rows = cells[0], [row for row in cells[1:] if not _TABLE_RULE.match("|".join(row))]
    units = []
    for row in rows:
        rest = "; ".join(f"{h} : {c}" for h, c in zip(header[1:], row[1:], strict=False) if c)
        units.append(Unit(f"{row[0]} — {rest}" if rest else row[0], "row", group))
    return units


def note_passages(
    settings: Settings,
    result: SearchResult,
    limit: int,
    asked: set[str] | None = None,
    closeness: Closeness | None = None,
) -> list[Passage]:
    """The section of ``result``'s best chunk first, then the note's other sections, the closest in meaning
    first (``closeness``), then those holding the most of the ``asked`` terms (then the most terms of the
    first), within ``limit`` units (the chunk alone when the note is gone)."""
    if result.page is not None:  # a document's page: its hit's text is what was extracted, the file no Markdown
        return _within([chunk_passage(result)], limit)
    note = read_source_if_readable(settings, result.path)
    sections = note.markdown.sections() if note is not None else []
    passages = [
        Passage(result.path, result.title, " > ".join(s.heading_path), units_of("\n".join(s.lines))) for s in sections
    ]
    best = next((p for p in passages if p.heading == result.heading and p.units), None)
    if best is None:
        best = chunk_passage(result)  # a document's page, or a note read before it changed
    lead = next((p for p in passages if p.units), best)
    others = [p for p in passages if p is not best and p.units]
    words, asked = _terms(best), asked or set()
    close = dict(zip(map(id, others), closeness(others) if closeness else [0.0] * len(others), strict=True))
    # Meaning first: a section answering in other words (« légumes mous » for « carottes molles ») holds none
    # of the question's terms, and units past ``limit`` are never scored; then the best section's siblings (the
    # step or list item that answers sits beside the chunk found), then the sections holding the most terms.
    others.sort(
        key=lambda p: (
            -close[id(p)],
            -_shared(best.heading, p.heading),
            -len(asked & _terms(p)),
            -len(words & _terms(p)),
        )
    )
    titled = set(lexical.analyze(result.title))
    if lead is best or (titled and titled <= asked):
        return _within([best, *others], limit)
    # "Is there a way to…?" is answered by the note's opening ("X is a core plugin that lets you…"), however
    # far below it the best chunk is: its first sentences are scored too, unless the question names the note
    # (who asks about « projet Atlas » knows what it is).
    opening = Passage(result.path, result.title, lead.heading, lead.units[:LEAD_UNITS], lead=True)
    cut = _within([best], limit - len(opening.units))  # a long best section leaves the opening its room
    return _within([*cut, opening, *(p for p in others if p is not lead)], limit)


def _shared(heading: str, other: str) -> int:
    """How many headings two sections' paths share from the top."""
    shared = 0
    for mine, theirs in zip(heading.split(" > "), other.split(" > "), strict=False):
        if mine != theirs:
            break
        shared += 1
    return shared


def telling_units(units: list[Unit], asked: set[str], limit: int) -> list[Unit]:
    """The ``limit`` units holding the most ``asked`` terms, in their order."""
    ranked = sorted(range(len(units)), key=lambda i: -len(asked & set(lexical.analyze(units[i].plain))))
    return [units[i] for i in sorted(ranked[:limit])]


def _terms(passage: Passage) -> set[str]:
    return set(lexical.analyze(" ".join([passage.heading, *(u.plain for u in passage.units)])))


def chunk_passage(result: SearchResult) -> Passage:
    units = units_of(result.text, document=result.page is not None)
    return Passage(result.path, result.title, result.heading, units, page=result.page, screenshot=result.screenshot)


def _within(passages: list[Passage], limit: int) -> list[Passage]:
    kept, left = [], limit
    for passage in passages:
        if left <= 0:
            break
        kept.append(
            Passage(
                passage.path,
                passage.title,
                passage.heading,
                passage.units[:left],
                passage.primary,
                passage.page,
                passage.screenshot,
                passage.lead,
            )
        )
        left -= len(kept[-1].units)
    return kept
