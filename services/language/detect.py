"""French or English: the language a text is written in."""

from __future__ import annotations

import re

_FRENCH_HINTS = frozenset(
    "le la les un une des du de est et ou où que qui quoi quel quelle quels quelles je j tu il elle nous vous "
    "mon ma mes ton ta tes son sa ses ce cette ces dans sur pour avec pas plus comment pourquoi quand "
    "qu est-ce c ai as a été fait faire sont notes note semaine mois".split()
)
_ENGLISH_HINTS = frozenset(
    "the a an is are was were and or of to in on for with what which who whom why how when did do does "
    "i my me you your it this that these those about notes note week month have has wrote write".split()
)


def detect_language(text: str) -> str:
    """``fr`` or ``en`` from function words and accents; French wins ties (it is the product's first language)."""
    words = re.findall(r"[\w’']+", text.lower().replace("’", "'"))
    tokens = [w.split("'")[-1] for w in words] + [w.split("'")[0] for w in words if "'" in w]
    french = sum(t in _FRENCH_HINTS for t in tokens) + 2 * len(re.findall(r"[éèêàùçœ]", text.lower()))
    english = sum(t in _ENGLISH_HINTS for t in tokens)
    return "en" if english > french else "fr"
