"""What a question asks for, and what a section or a quoted passage holds, by simple rules the embedding model
misses: a trouble and the section of troubles that answers it, the word forms its stemmer keeps apart
(« molles » / « mous »), a date asked « quand » and a date written.
"""

from __future__ import annotations

import re

from services.retrieval import lexical

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
