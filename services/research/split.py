"""The deterministic decomposition: used when the model's is unusable, or when the model cannot write.

Three shapes cover what users ask across notes (issue #35):
- a **period** longer than a month (« comment Atlas a évolué de septembre à novembre ») is searched month by
  month, each with its own dates, so every meeting of the span can surface, not only the closest one;
- a **comparison** (« différence entre le levain et la fermentation des légumes », "X vs Y") is searched
  side by side, « celle des légumes » completed with the first side's noun;
- an **enumeration** or two clauses joined by « et / and » (« le rôle de Claire, Marc et Sophie dans
  Atlas ») keeps the question's frame around each item: « le rôle de Marc dans Atlas ».
Anything else stays one sub-question: the question itself.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from datetime import date, datetime

from services.language.dates import parse_date_range, strip_date_expression
from services.retrieval import lexical

MAX_SUB_QUESTIONS = 5
MIN_SPAN_DAYS = 45  # a period this long is searched month by month
ITEM_WORDS = 4  # an enumeration's item is this short; a longer piece is a clause of its own
_COMPARE = re.compile(
    r"(?:compare[rz]?|comparaison\s+(?:de|d['’]|entre)|diff[ée]rences?\s+entre|points?\s+communs?\s+entre|"
    r"diff[ée]rences?\s+(?:de|d['’])|compare|comparison\s+of|differences?\s+between|difference\s+between|"
    r"between)\s+(?P<a>.+?)\s+(?:et|and|avec|with|à|to|vs\.?|versus)\s+(?P<b>.+?)\s*$",
    re.IGNORECASE,
)
_VERSUS = re.compile(r"^(?P<a>.+?)\s+(?:vs\.?|versus|contre)\s+(?P<b>.+?)\s*$", re.IGNORECASE)
_SAME_AS_FIRST = re.compile(r"^(?:celle|celui|celles|ceux|that|those)\s+(?=(?:de|du|des|d['’]|of)\b)", re.I)
_OF = re.compile(r"\s(?:de|du|des|d['’]|of)\b", re.IGNORECASE)
_JOIN = re.compile(r"\s*(?:[,;]|\s(?:et|and|ainsi que|as well as|puis|then)\s)\s*", re.IGNORECASE)
_AND = re.compile(  # « et », or a comma before a question word (« …, qu'est-ce que ça a donné… »)
    r"\s(?:et|and|ainsi que|as well as)\s|,\s+(?=(?:qu['’]est-ce|que|qui|quel\w*|comment|pourquoi|où|quand|combien|"
    r"what|who|how|why|where|when|which)\b)",
    re.IGNORECASE,
)
_COMPLEMENT = re.compile(
    r"\s(?=(?:dans|pour|sur|chez|pendant|lors|depuis|avant|après|in|for|on|at|during|within|before|after)\s)", re.I
)
_PRONOUN = re.compile(
    r"\b(?:il|elle|ils|elles|lui|leur|en|y|chacun|chacune|ça|cela|it|they|them|their|its|that|this|each|him|her)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[?!.])\s+(?=[A-ZÀ-Ý«\"])")
_LEADING_JOIN = re.compile(r"^(?:et|mais|puis|aussi|and|but|also)\s+", re.IGNORECASE)
_ELISION = re.compile(r"\b[ln]['’]", re.IGNORECASE)  # « on l'a comparé »: what « l' » stands for is elsewhere
# An instruction about the answer, not a question of its own (« Rassemble ce que j'ai comme indices »).
_REQUEST = re.compile(
    r"^(?:rassemble|résume|fais|donne|liste|explique|dis-moi|montre|détaille|précise|gather|summari[sz]e|give|"
    r"list|explain|tell me|show|detail)\b",
    re.IGNORECASE,
)
REQUEST_TERMS = 3
SHORT_TERMS = 2  # a sentence this thin (« Qu'est-ce que je peux faire ? ») is about the scene set before it
_ASKS = re.compile(
    r"^(?:qu['’]est-ce|que|qu['’]|qui|quoi|quel\w*|comment|pourquoi|où|quand|combien|est-ce|"
    r"what|who|how|why|where|when|which|is|are|do|does|did|can)\b",
    re.IGNORECASE,
)
_CLAUSE = re.compile(  # a piece asking something of its own (« que fait-il »): a clause, not an item
    r"^(?:que|qu['’]|qui|quoi|quel\w*|comment|pourquoi|où|quand|combien|what|who|how|why|where|when|which)\b|"
    r"\b(?:est|sont|a|ont|fait|font|is|are|was|were|does|did|do|has|have)\b|-(?:il|elle|ils|elles|on)\b",
    re.IGNORECASE,
)
_MONTHS = {
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre".split(),
    "en": "January February March April May June July August September October November December".split(),
}


@dataclass(frozen=True)
class Piece:
    """One sub-question of the split; ``since``/``until`` when it is one slice of the question's period."""

    text: str
    since: datetime | None = None
    until: datetime | None = None
    whole: bool = False  # stands alone (a comparison's side, an item in its frame, a month): never completed


def split_research(question: str, now: datetime, language: str = "fr") -> list[Piece]:
    """At most ``MAX_SUB_QUESTIONS`` sub-questions for ``question``; ``[question]`` when nothing splits.
    Several sentences (« … fin novembre ? Et pourquoi … ? ») are split first, each then on its own."""
    context, sentences = _sentences(question)
    pieces = [p for s in sentences for p in _split_one(_LEADING_JOIN.sub("", s), now, language)]
    pieces = _distinct(pieces)[:MAX_SUB_QUESTIONS]
    if len(pieces) < 2:
        return [Piece(question.strip())]  # one search: the question as asked
    # A scene set before the questions reaches each; else a piece leaning on the first takes its words.
    subject = " ".join(lexical_words(context or pieces[0].text))
    first = [_leaning(pieces[0], subject, True)] if context else pieces[:1]
    return first + [_leaning(p, subject, bool(context)) for p in pieces[1:]]


def _leaning(piece: Piece, subject: str, always: bool) -> Piece:
    if piece.whole:
        return piece
    return Piece(_sentence(_with_subject(piece.text, subject, always)), piece.since, piece.until)


def _split_one(text: str, now: datetime, language: str) -> list[Piece]:
    for split in (_by_period, _by_comparison, _by_enumeration):
        pieces = split(text, now, language)
        if len(pieces) > 1:
            return pieces
    return [Piece(_sentence(_bare(text)))]


def _sentences(text: str) -> tuple[str, list[str]]:
    """The statements that set the scene (« J'ai deux livres en cours. »), and the sentences that ask something
    of their own (« Rassemble ce que j'ai » asks nothing)."""
    parts = [p.strip() for p in _SENTENCE_END.split(text.strip()) if p.strip()]
    parts = [p for p in parts if not (_REQUEST.match(p) and len(lexical.analyze(p)) <= REQUEST_TERMS)] or parts
    first = next((i for i, p in enumerate(parts) if p.endswith("?")), 0)
    return " ".join(parts[:first]), parts[first:]  # what comes after the first question is asked too


def _with_subject(sentence: str, subject: str, always: bool = False) -> str:
    """A sentence leaning on the scene or the first sentence (« on l'a comparé à… », « Ça coûte combien ? »)
    with their words."""
    sentence = _bare(_LEADING_JOIN.sub("", sentence))
    leans = _PRONOUN.search(sentence) or _ELISION.search(sentence) or len(lexical.analyze(sentence)) <= SHORT_TERMS
    if not (leans or always) or not subject or "(" in sentence:
        return sentence
    if set(lexical.analyze(subject)) <= set(lexical.analyze(sentence)):
        return sentence
    return f"{_bare(sentence)} ({subject})"


def _by_period(text: str, now: datetime, language: str) -> list[Piece]:
    found = parse_date_range(text, now)
    if found is None or (found.end - found.start).days < MIN_SPAN_DAYS:
        return []
    topic = _bare(strip_date_expression(text, found))
    if not lexical.analyze(topic):
        return []
    slices = _month_slices(found.start, found.end)
    names = _MONTHS.get(language, _MONTHS["fr"])
    pieces = []
    for start, end in slices:
        months = {(d.year, d.month) for d in (start, end - (end - start) / 1e6)}
        label = " – ".join(f"{names[m - 1]} {y}" for y, m in sorted(months))
        pieces.append(Piece(f"{topic} ({label})", start, end, whole=True))
    return pieces


def _month_slices(start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """The period cut at month starts, merged into at most ``MAX_SUB_QUESTIONS`` slices."""
    cuts = [start]
    day = date(start.year, start.month, 1)
    while True:
        day = date(day.year + (day.month == 12), day.month % 12 + 1, 1)
        cut = datetime(day.year, day.month, 1, tzinfo=start.tzinfo)
        if cut >= end:
            break
        cuts.append(cut)
    cuts.append(end)
    if len(cuts) - 1 > MAX_SUB_QUESTIONS:  # a long span: five equal runs of months
        step = (len(cuts) - 1) / MAX_SUB_QUESTIONS
        cuts = [cuts[round(i * step)] for i in range(MAX_SUB_QUESTIONS)] + [end]
    return list(itertools.pairwise(cuts))


def _by_comparison(text: str, now: datetime, language: str) -> list[Piece]:
    bare = _bare(text)
    match = _COMPARE.search(bare) or _VERSUS.match(bare)
    if match is None:
        return []
    first, second = match["a"].strip(" ,"), match["b"].strip(" ,")
    if _SAME_AS_FIRST.match(second):  # « celle des légumes »: the first side's noun
        head = _OF.split(first, maxsplit=1)[0]
        second = _SAME_AS_FIRST.sub(f"{head} ", second)
    frame = bare[: match.start()].strip(" ,:")
    frame = "" if not lexical.analyze(frame) or _COMPARE.match(frame) else frame
    sides = (first, second)
    return [Piece(_sentence(f"{frame} {side}".strip()), whole=True) for side in sides if lexical.analyze(side)]


def _by_enumeration(text: str, now: datetime, language: str) -> list[Piece]:
    bare = _bare(text)
    pieces = [p.strip() for p in _JOIN.split(bare) if p.strip()]
    if len(pieces) < 2:
        return []
    head, *rest = pieces
    rest, complement = _complement(rest)
    if all(_words(p) <= ITEM_WORDS and not _CLAUSE.search(p) for p in rest):  # items, in the first piece's frame
        size = max(1, round(sum(_words(p) for p in rest) / len(rest)))
        words = head.split()
        if len(words) <= size:
            return []
        frame, first = " ".join(words[:-size]), " ".join(words[-size:])
        return [Piece(_sentence(f"{frame} {item}{complement}"), whole=True) for item in [first, *rest]]
    clauses: list[str] = []
    for clause in (c.strip(" ,") for c in _AND.split(bare)):  # clauses: commas stay inside them
        if clauses and len(lexical.analyze(clauses[-1])) < SHORT_TERMS and not _ASKS.match(clauses[-1]):
            clauses[-1] = f"{clauses[-1]}, {clause}"  # « Concrètement, quel exemple… »: one clause
        elif clause:
            clauses.append(clause)
    return [Piece(_sentence(c)) for c in clauses] if len(clauses) > 1 else []


def _complement(rest: list[str]) -> tuple[list[str], str]:
    """The last item's trailing complement (« Sophie dans Atlas » → « Sophie », « dans Atlas »): every item's."""
    last = rest[-1]
    parts = _COMPLEMENT.split(last, maxsplit=1)
    if len(parts) == 2 and _words(parts[0]) <= ITEM_WORDS and lexical.analyze(parts[0]):
        return [*rest[:-1], parts[0].strip()], " " + parts[1].strip()
    return rest, ""


def lexical_words(text: str) -> list[str]:
    """The words of ``text`` that carry meaning (those the search's analyser keeps), as written."""
    return [w for w in re.findall(r"[\w’'-]+", text) if lexical.analyze(w)]


def _bare(text: str) -> str:
    return text.strip().rstrip("?!. ").strip()


def _sentence(text: str) -> str:
    return _bare(re.sub(r"\s+", " ", text)).strip(" ,") + " ?"


def _words(text: str) -> int:
    return len(text.split())


def _distinct(pieces: list[Piece]) -> list[Piece]:
    seen: set[tuple[str, ...]] = set()
    kept = []
    for piece in pieces:
        key = (*lexical.analyze(piece.text), str(piece.since))
        if key not in seen:
            seen.add(key)
            kept.append(piece)
    return kept
