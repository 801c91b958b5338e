"""French or English: the language a text is written in.

Function words decide a sentence; a keyword list has none ("sync plan max file size storage limit"), so the
words' own spelling votes too: the character trigrams of each word, scored against French and English
profiles (``trigrams.json``, written by bench/language_profiles.py). Shared technical words (Docker, Git,
Python) score near zero in both, so the sentence around them decides.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

PROFILES = Path(__file__).with_name("trigrams.json")
# One word's vote is capped: a single very French or very English word ("Lovelace", "rafraîchi") does not
# outweigh the rest of a keyword list, nor a function word (each worth 1).
_WORD_CAP = 1.5
_UNSEEN = 0.5  # the count a trigram outside a profile gets (its log-probability's floor)

_FRENCH_HINTS = frozenset(
    "le la les un une des du de est et ou où que qui quoi quel quelle quels quelles je j tu il elle nous vous "
    "mon ma mes ton ta tes son sa ses ce cette ces dans sur pour avec pas plus comment pourquoi quand "
    "qu est-ce c ai as a été fait faire sont notes note semaine mois".split()
)
_ENGLISH_HINTS = frozenset(
    "the a an is are was were and or of to in on for with what which who whom why how when did do does "
    "i my me you your it this that these those about notes note week month have has wrote write".split()
)
_LETTERS = re.compile(r"[a-zàâäçéèêëîïôöùûüÿœæ]+")


def word_trigrams(text: str) -> Iterator[str]:
    """Character trigrams of each lowercase word of ``text``, the word padded with a space on each side."""
    for word in _LETTERS.findall(text.lower()):
        padded = f" {word} "
        yield from (padded[i : i + 3] for i in range(len(padded) - 2))


@lru_cache(maxsize=1)
def _log_probabilities() -> dict[str, tuple[dict[str, float], float]]:
    """Per language: each profile trigram's log-probability, and the floor for the others."""
    profiles = json.loads(PROFILES.read_text(encoding="utf-8"))
    found: dict[str, tuple[dict[str, float], float]] = {}
    for language, pairs in profiles.items():
        total = sum(count for _, count in pairs)
        found[language] = ({gram: math.log(count / total) for gram, count in pairs}, math.log(_UNSEEN / total))
    return found


def spelling_lean(text: str) -> float:
    """How English the words of ``text`` look by their spelling (> 0) or French (< 0): per word, the mean
    log-likelihood ratio of its trigrams, capped at ``_WORD_CAP``, summed over the words."""
    (english, en_floor), (french, fr_floor) = _log_probabilities()["en"], _log_probabilities()["fr"]
    lean = 0.0
    for word in _LETTERS.findall(text.lower()):
        grams = list(word_trigrams(word))
        ratio = sum(english.get(g, en_floor) - french.get(g, fr_floor) for g in grams) / len(grams)
        lean += max(-_WORD_CAP, min(_WORD_CAP, ratio))
    return lean


def detect_language(text: str) -> str:
    """``fr`` or ``en`` from function words, accents and the words' spelling; French wins ties (it is the
    product's first language)."""
    words = re.findall(r"[\w’']+", text.lower().replace("’", "'"))
    tokens = [w.split("'")[-1] for w in words] + [w.split("'")[0] for w in words if "'" in w]
    french = sum(t in _FRENCH_HINTS for t in tokens) + 2 * len(re.findall(r"[éèêàùçœ]", text.lower()))
    english = sum(t in _ENGLISH_HINTS for t in tokens)
    return "en" if english - french + spelling_lean(text) > 0 else "fr"
