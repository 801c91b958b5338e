"""Memory in the chat: the facts relevant to a question, and what "retiens que …" / "oublie que …" do.

Relevance is lexical (the project's FR/EN analyzer over the fact's subject, predicate and value), the
fact's subject or a proper name of its value named in the question, and meaning: the cosine the indexer
found between the question and the fact (``services.retrieval.fact_vectors``, asked for by the chat's own search,
so that the question is embedded once). The facts that fit ``memory_chat_chars`` go into the prompt, best
first, and are shown under the answer ("mémoire utilisée").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from services.catalog import Catalog
from services.catalog.memory_models import Fact, FactKind, FactSource, FactStatus, normalise
from services.catalog.models import MemoryUse
from services.indexing.mentions import normalize_name
from services.memory.facts import Outcome, Policy, file_fact, forget_fact
from services.memory.wording import NOTE, SELF, fact_phrase
from services.retrieval import lexical
from services.retrieval.fact_vectors import MemoryMatch

HEADER = {
    "fr": "Ce que tu sais de l'utilisateur (mémoire ; ne t'en sers que si la question s'y rapporte) :",
    "en": "What you know about the user (memory; use it only when the question is about it):",
}
FORGET_SHARE = 0.6  # of a fact's terms the "oublie que …" sentence must hold
_REMEMBER = re.compile(
    r"^\s*(?:retiens|souviens[-\s]toi|m[ée]morise|note|remember|keep\s+in\s+mind)\s+(?:bien\s+)?"
    r"(?:que\s+|qu['’]\s*|that\s+)(?P<what>\S.*?)\s*[.!]?\s*$",
    re.I,
)
_FORGET = re.compile(r"^\s*(?:oublie|forget)\s+(?:que\s+|qu['’]\s*|that\s+)(?P<what>\S.*?)\s*[.!]?\s*$", re.I)
_FIRST_PERSON = re.compile(  # the pronoun stays in the predicate: the fact is said back « Tu es … » (wording)
    r"^(?P<predicate>(?:je\s+|j['’]\s*)(?:ne\s+|n['’]\s*)?\S+|i(?:\s+am|['’]m)|i\s+\S+)\s+(?P<rest>.+)$", re.I
)
_POSSESSIVE = re.compile(
    r"^(?:mon|ma|mes|my)\s+(?P<what>.+?)\s+(?P<verb>est|sont|s['’]appelle|is|are|s['’]appellent)\s+(?P<rest>.+)$", re.I
)
_THIRD = re.compile(r"^(?P<subject>[A-ZÉÈÀ][\w'’-]*(?:\s+[A-ZÉÈÀ][\w'’-]*)*)\s+(?P<verb>\S+)\s+(?P<rest>.+)$")
_PROPER_NAME = re.compile(r"\b[A-ZÉÈÀÎ][\w'’-]+(?:\s+[A-ZÉÈÀÎ][\w'’-]+)*")
_KIND_WORDS = (
    (FactKind.DECISION, r"d[ée]cid|decided|choisi|chose"),
    (FactKind.GOAL, r"veux|voudrais|vise|objectif|want|aim|goal"),
    (FactKind.HABIT, r"tous\s+les|chaque|toujours|d'habitude|every|always|usually"),
    (FactKind.PREFERENCE, r"pr[ée]f[èe]r|aime|adore|d[ée]teste|prefer|like|love|hate"),
)


def relevant_facts(
    catalog: Catalog, question: str, budget_chars: int, matches: Sequence[MemoryMatch] = ()
) -> list[Fact]:
    """Confirmed facts sharing terms with the question, naming a subject or name it names, or close to it in
    meaning (``matches``, the indexer's answer to the chat's search); best first, within budget."""
    terms = set(lexical.analyze(question))
    folded = f" {normalize_name(question)} "
    cosines = {m.fact_id: m.cosine for m in matches}
    scored = []
    for fact in catalog.facts([FactStatus.CONFIRMED]):
        shared = len(terms & set(lexical.analyze(f"{fact.subject} {fact.predicate} {fact.value}")))
        named = any(f" {name} " in folded for name in _names(fact))
        cosine = cosines.get(fact.id or 0)
        if shared or named or cosine is not None:
            # A match by meaning counts as one shared term; the cosine orders the facts that tie.
            score = shared + 2 * named + (cosine is not None)
            scored.append((score, cosine or 0.0, fact.updated_at, fact))
    picked, used = [], 0
    for *_order, fact in sorted(scored, key=lambda item: item[:3], reverse=True):
        if used + len(fact.sentence()) > budget_chars:
            continue
        used += len(fact.sentence()) + 3
        picked.append(fact)
    return picked


def _names(fact: Fact) -> list[str]:
    """What a question names when it names the fact: its subject (other than the user), and the proper names
    of its value ("le Dr Roy", "Sophie Nguyen"), in ``normalize_name``'s form (the entities' own)."""
    names = [] if normalise(fact.subject) == SELF else [fact.subject]
    # One capitalised word opening the value is its first word ("Les soirs…"), not a name.
    names += [m[0] for m in _PROPER_NAME.finditer(fact.value) if m.start() or " " in m[0]]
    return [n for n in (normalize_name(name) for name in names) if len(n) >= 3 and lexical.analyze(n)]


def memory_block(facts: list[Fact], language: str) -> str:
    return "\n".join([HEADER.get(language, HEADER["fr"]), *(f"- {f.sentence()}" for f in facts)]) if facts else ""


def uses(facts: list[Fact]) -> list[MemoryUse]:
    return [MemoryUse(id=f.id or 0, text=fact_phrase(f)) for f in facts]  # as the page shows it


# --- "retiens que …" / "oublie que …" ---------------------------------------------------------------


def remembered(question: str) -> str | None:
    match = _REMEMBER.match(question)
    return match["what"] if match else None


def forgotten(question: str) -> str | None:
    match = _FORGET.match(question)
    return match["what"] if match else None


def statement_fact(statement: str, now: datetime, thread_id: str) -> Fact:
    """A chat fact from a sentence: "je préfère le thé" → (moi, je préfère, le thé); "mon dentiste est le Dr Roy"
    → (moi, dentiste, le Dr Roy); "Sophie est ma sœur" → (Sophie, est, ma sœur); else (moi, note, sentence)."""
    text = statement.strip()
    subject, predicate, value = SELF, NOTE, text
    if match := _FIRST_PERSON.match(text):
        predicate, value = " ".join(match["predicate"].split()), match["rest"]
    elif match := _POSSESSIVE.match(text):
        predicate, value = match["what"], match["rest"]
    elif match := _THIRD.match(text):
        subject, predicate, value = match["subject"], match["verb"], match["rest"]
    kind = next((k for k, words in _KIND_WORDS if re.search(words, text, re.I)), None)
    kind = kind or (FactKind.ENTITY if subject != SELF else FactKind.PREFERENCE)
    return Fact(
        subject=subject[:120],
        predicate=predicate[:120],
        value=value[:300],
        kind=kind,
        confidence=1.0,
        source=FactSource.CHAT,
        source_ref=thread_id,
        created_at=now,
        updated_at=now,
        last_seen=now,
    )


def remember(catalog: Catalog, policy: Policy, statement: str, now: datetime, thread_id: str) -> tuple[Fact, Outcome]:
    fact = statement_fact(statement, now, thread_id)
    return fact, file_fact(catalog, fact, policy, now)


def forget_matching(catalog: Catalog, statement: str, now: datetime) -> list[Fact]:
    """Forget (reject) every active fact the sentence describes: most of its terms are in the sentence."""
    said = set(lexical.analyze(statement))
    gone = []
    for fact in catalog.active_facts():
        terms = set(lexical.analyze(f"{fact.predicate} {fact.value}"))
        if terms and len(terms & said) >= FORGET_SHARE * len(terms):
            forget_fact(catalog, fact.id or 0, now)
            gone.append(fact)
    return gone
