"""How a remembered fact reads to the user: « Tu es végétarien », « Régime : végétarien », « Sophie est ma sœur ».

A fact is stored as (subject, predicate, value) for matching; said back, it is a sentence. A statement made
in the first person keeps its pronoun in the predicate (``je suis``, ``j'ai``, ``I like``), so it is said
back in the second person; a noun predicate (``régime``, from ``Profil.md`` or the consolidation) reads as
a label; a chat sentence about someone else reads as it was said.
"""

from __future__ import annotations

import re

from services.catalog.memory_models import Fact, FactSource, normalise

SELF = "moi"  # the subject of what the user says of themself
NOTE = "note"  # the predicate of a statement no pattern recognised: its value is the whole sentence
_FRENCH_FIRST = re.compile(r"^(?:je\s+|j['’]\s*)(?P<negation>ne\s+|n['’]\s*)?(?P<verb>\S+)$", re.I)
_ENGLISH_FIRST = re.compile(r"^i(?:\s+|(?=['’]))(?P<rest>.+)$", re.I)
_FRENCH_IRREGULAR = {"suis": "es", "ai": "as", "vais": "vas"}
_ENGLISH_IRREGULAR = {"am": "are", "'m": "'re", "’m": "’re", "was": "were"}
_VOWEL = re.compile(r"^[aeiouyhàâéèêëîïôûù]", re.I)


def fact_phrase(fact: Fact, inline: bool = False) -> str:
    """The fact as a sentence for the pages and the chat's replies (prompts keep ``Fact.sentence``);
    ``inline``: within a sentence (« C'est noté : tu es végétarien. »)."""
    if normalise(fact.subject) == SELF:
        phrase = _about_the_user(fact.predicate, fact.value)
        return phrase[:1].lower() + phrase[1:] if inline else phrase
    if fact.source == FactSource.CHAT and " " not in fact.predicate.strip():
        return f"{fact.subject} {fact.predicate} {fact.value}"  # « Sophie est ma sœur », as it was said
    return f"{fact.subject} — {fact.predicate} : {fact.value}"


def _about_the_user(predicate: str, value: str) -> str:
    if predicate.strip().lower() in _FRENCH_IRREGULAR:  # stored before the pronoun was kept: (moi, suis, …)
        predicate = f"je {predicate.strip()}"
    if match := _FRENCH_FIRST.match(predicate.strip()):
        verb = second_person(match["verb"])
        negation = ("n'" if _VOWEL.match(verb) else "ne ") if match["negation"] else ""
        return f"Tu {negation}{verb} {value}"
    if match := _ENGLISH_FIRST.match(predicate.strip()):
        first, _, more = match["rest"].partition(" ")
        verb = _ENGLISH_IRREGULAR.get(first.lower(), first)
        joined = f"You{verb}" if verb.startswith(("'", "’")) else f"You {verb}"
        return " ".join(part for part in (joined, more, value) if part)
    if normalise(predicate) == NOTE:
        return _capitalised(value)
    return f"{_capitalised(predicate)} : {value}"


def second_person(verb: str) -> str:
    """A French verb said with « je », said with « tu »: suis → es, préfère → préfères, ferai → feras."""
    lower = verb.lower()
    if lower in _FRENCH_IRREGULAR:
        return _FRENCH_IRREGULAR[lower]
    if lower.endswith("e"):
        return verb + "s"
    if lower.endswith("ai"):  # future and simple past: « je ferai » → « tu feras »
        return verb[:-1] + "s"
    return verb  # -s, -x (« je peux », « je bois ») and the imperfect (« j'étais ») are the same


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]
