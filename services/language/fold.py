"""Folding text for comparisons that ignore case and accents: ``fold``, the one function for it.

``fold("Œuvres Complètes")`` → ``"oeuvres completes"``: casefolded, diacritics dropped (é→e, ç→c, NFD
input too), ligatures expanded (œ→oe, æ→ae, ß→ss). Entity names, date expressions, the note picker's
order and the catalog's substring search use it; the lexical index calls ``fold_accents`` inside its own
pipeline (NFKC, casefold, elisions, then accents) on its hot path.

Two comparisons keep accents on purpose, and so do not fold: link resolution (``links.link_key``:
Obsidian resolves ``[[cafe]]`` to ``cafe.md``, not to ``café.md``) and heading anchors
(``markdown.heading_slug``: ``#durée-et-planning``, as the heading is written).
"""

from __future__ import annotations

import unicodedata

_LIGATURES = str.maketrans({"œ": "oe", "æ": "ae", "ß": "ss"})


def _fold_slowly(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.translate(_LIGATURES))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


class _FoldTable(dict[int, str]):
    """Each character's folded form, computed on first sight: ``str.translate`` then runs at C speed,
    ~10× faster than decomposing every character of a text in Python. Folding one character at a time
    gives the same text, since only combining marks (dropped) ever move in a decomposition."""

    def __missing__(self, code: int) -> str:
        folded = self[code] = _fold_slowly(chr(code))
        return folded


_FOLD_TABLE = _FoldTable()


def fold_accents(text: str) -> str:
    """Remove diacritics (é→e, ç→c) and expand ligatures (œ→oe, æ→ae); case is kept."""
    return text if text.isascii() else text.translate(_FOLD_TABLE)


def fold(text: str) -> str:
    """``text`` casefolded and without accents: the form case- and accent-blind comparisons use."""
    return fold_accents(text.casefold())
