"""What a question asks for, and what a section or a quoted passage holds, by simple rules the embedding model
misses: a trouble and the section of troubles that answers it, the word forms its stemmer keeps apart
(« molles » / « mous »), a date asked « avant quand » and one written « avant le 31 janvier ».
"""

from __future__ import annotations

import re

from services.retrieval import lexical
from services.retrieval.query_terms import query_terms

_TROUBLE_ASKED = re.compile(
    r"\b(pourquoi|probl[eè]mes?|soucis?|rat[ée]e?s?|devenu(e|s|es)?|why|problems?|issues?|wrong|became|turned)\b",
    re.IGNORECASE,
)
_TROUBLE_HEADING = re.compile(
    r"\b(probl[eè]mes?|erreurs?|soucis?|d[ée]pannage|pi[eè]ges?|[ée]checs?|rat[ée]s|difficult[ée]s|"
    r"troubleshoot\w*|problems?|issues?|pitfalls?|mistakes?|failures?)\b",
    re.IGNORECASE,
)
# Irregular French forms the Snowball stemmer leaves apart (mou/molle, fou/folle, beau/belle …): one term each.
_FORMS = {
    "moll": "mou",
    "mol": "mou",
    "mous": "mou",
    "foll": "fou",
    "fol": "fou",
    "fous": "fou",
    "bel": "beau",
    "nouvel": "nouveau",
    "vieil": "vieux",
}


def asks_trouble(question: str) -> bool:
    """« Pourquoi mes carottes sont devenues molles ? »: a problem, whose causes a note's troubles section lists."""
    return bool(_TROUBLE_ASKED.search(question))


def lists_troubles(heading: str) -> bool:
    """A section of troubles and their fixes (« Problèmes rencontrés », « Troubleshooting »), by its own heading."""
    return bool(_TROUBLE_HEADING.search(heading.split(" > ")[-1]))


def term(analysed: str) -> str:
    """One term for the forms of a word the stemmer keeps apart."""
    return _FORMS.get(analysed, analysed)


def terms(text: str) -> set[str]:
    return {term(t) for t in lexical.analyze(text)}


_MONTHS = (
    "janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre|"
    "january|february|march|april|may|june|july|august|september|october|november|december"
)
_DAYS = "lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_DATE_ASKED = re.compile(r"\b(quand|date|délai|échéance|when|deadline|until|what day|which day)\b", re.IGNORECASE)
_DATE_WRITTEN = re.compile(
    rf"\b(\d{{1,2}}(er)?\s+({_MONTHS})|({_MONTHS})\s+\d{{1,2}}|\d{{1,2}}/\d{{1,2}}(/\d{{2,4}})?|\d{{4}}-\d\d-\d\d|{_DAYS})\b",
    re.IGNORECASE,
)
_AMOUNT_ASKED = re.compile(r"\b(combien|prix|co[uû]te?s?|tarifs?|montant|how much|price|costs?)\b", re.IGNORECASE)
_AMOUNT_WRITTEN = re.compile(r"\d+(?:[.,]\d+)?\s*(?:€|euros?\b|eur\b|\$|%|dollars?\b)|[€$£]\s*\d", re.IGNORECASE)
_KINDS = ((_DATE_ASKED, _DATE_WRITTEN), (_AMOUNT_ASKED, _AMOUNT_WRITTEN))
_KIND_TERMS = frozenset(
    terms("avant après jusqu date limite délai échéance prix coût tarif montant before after until deadline price fee")
)
# What a quote answering a date or an amount may say in other words (« payer » … « à régler avant le 31 janvier »).
_SAID_OTHERWISE = frozenset(
    terms("payer paiement régler acquitter verser argent inscrire commencer finir rendre pay payment due start end")
)


def covers(part: str, quoted: str) -> bool:
    """Whether ``quoted`` (a quote's own text) answers ``part`` of a question: what the part asks (a date for
    « avant quand », an amount for « combien ») is written there, and so are its words, but for a verb such a
    quote may say otherwise (a part about something else names what the quote lacks: « la fête des voisins »)."""
    held = terms(quoted)
    rest = [t for t in map(term, query_terms(part)) if t not in _KIND_TERMS and t not in held]
    asked = [written for asks, written in _KINDS if asks.search(part)]
    if asked:
        return all(written.search(quoted) for written in asked) and not set(rest) - _SAID_OTHERWISE
    return not rest


def uncovered(parts: list[str], quoted: str) -> list[str]:
    """The missing parts of a question that ``quoted`` does not answer after all: only they are said missing."""
    return [part for part in parts if not covers(part, quoted)]
