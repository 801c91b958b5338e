"""What a query is about: its analysed terms, less the words that say how to ask and those that name the vault,
and how much of them the lexical list's best hit holds (the search's weight for that list)."""

from __future__ import annotations

from services.retrieval import lexical

# Question words that say how to ask, not what about: they never count as a match (grounding reads them too).
QUESTION_TERMS = frozenset(
    lexical.analyze(
        "quel quelle quels quelles comment pourquoi combien quand où qui quoi est-ce note notes coffre "
        "parle parles écrit dis explique détails what which how why when where who tell note notes vault "
        "wrote write explain details doit dois peut peux faut faire fait temps long much many can should does"
    )
)


# Words that name the vault itself ("my notes", "the vault"), not what a question is about: the lexical list
# leaves them out (the dense side reads them). In a question they match every note titled "… notes" and, the
# lexical list's best hit counting 1.0 whatever it matched, outweigh the meaning of an English question over
# French notes (docs/performance.md, "Paraphrased questions").
META_TERMS = frozenset(lexical.analyze("note notes coffre coffres vault vaults"))


def coverage(query: str, found: str, ignore: frozenset[str] = frozenset()) -> float:
    """Share of the query's terms (less ``ignore``) in ``found``, the lexical list's best hit: min-max
    normalisation makes any best hit 1.0, even one that matched a stray word (an English question over the
    vault's English notes), so the lexical list weighs what its best hit really matched (docs/performance.md,
    "Cross-lingual")."""
    terms = set(query_terms(query)) - ignore
    return len(terms & set(lexical.analyze(found))) / len(terms) if terms else 0.0


def query_terms(text: str) -> list[str]:
    """The analysed terms of a query that say what it is about (question words dropped), in order."""
    return [t for t in dict.fromkeys(lexical.analyze(text)) if t not in QUESTION_TERMS]
