"""Query understanding: language, intent, date range, tags, folders, note types and follow-ups."""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, Field

from services.language.dates import parse_date_range, strip_date_expression
from services.language.detect import detect_language
from services.retrieval import lexical
from services.retrieval.query_terms import query_terms
from services.retrieval.search import SearchRequest
from services.vault.models import NoteType


class Intent(StrEnum):
    ANSWER = "answer"
    LIST = "list"  # "quelles sont les notes où je parle de X ou Y ?"
    SUMMARY = "summary"  # "fais une synthèse de cette semaine"


class QueryPlan(BaseModel):
    question: str  # as the user wrote it: the prompt keeps their wording
    retrieval_query: str  # what the search engine sees (dates stripped, follow-ups completed)
    language: str  # "fr" or "en"
    intent: Intent = Intent.ANSWER
    since: datetime | None = None
    until: datetime | None = None
    dated: str = ""  # the date expression as written (« le 14 juillet »), "" when none
    tags: list[str] = Field(default_factory=list)
    folders: list[str] = Field(default_factory=list)
    types: list[NoteType] = Field(default_factory=list)
    topics: list[str] = Field(default_factory=list)  # for LIST: each alternative the user named
    is_followup: bool = False


_LIST_PATTERNS = (
    r"\b(quelles?|quels?)\s+(sont\s+)?(les\s+|mes\s+)?notes?\b",
    r"\bliste[rz]?\b.*\bnotes?\b",
    r"\bdans\s+quelles?\s+notes?\b",
    r"\b(which|what)\s+notes?\b",
    r"\blist\b.*\bnotes?\b",
)
_SUMMARY_PATTERNS = (
    r"\b(synth[eè]se|r[ée]sum[ée]|r[ée]sume|fais le point|bilan)\b",
    r"\b(mes|les)\s+derni[eè]res\s+notes\b",
    # A period's notes (« qu'ai-je écrit la semaine dernière ? »): listed, never answered from a few of them.
    r"\b(qu['’]est-ce que|qu['’])\s*j['’]ai\s+(écrit|appris|noté|fait)\b",
    r"\bqu['’]ai-je\s+(écrit|appris|noté|fait)\b",
    r"\bj['’]ai\s+(écrit|appris|noté|fait)\s+quoi\b",
    r"\b(summar(y|ise|ize)|recap|overview)\b",
    r"\bmy\s+(latest|recent|last)\s+notes\b",
    r"\bwhat\s+(did|have)\s+i\s+(write|written|learn|learned|learnt|note|noted|do|done)\b",
)
_TOPIC_AFTER = re.compile(
    r"\b(?:parle(?:nt)?\s+d[e'’]|parlent\s+de|mentionne(?:nt)?|traite(?:nt)?\s+de|évoque(?:nt)?|concerne(?:nt)?|sur|"
    r"about|mention(?:s)?|cover(?:s)?|discuss(?:es)?|deal(?:s)?\s+with|on)\s+(.+)$",
    re.IGNORECASE,
)
# A question about the notes themselves (« que disent mes notes sur le levain ? »): its subject is all the search
# needs; « notes », « disent », « écrit » matched every note and thinned the guard's evidence (issue #41.13).
_ABOUT_MY_NOTES = re.compile(
    r"^(?:(?:que|qu['’]est-ce que)\s+(?:disent|dit|racontent|contiennent)\s+(?:mes|les)\s+notes"
    r"|(?:que|qu['’]est-ce que)\s+(?:mes|les)\s+notes\s+(?:disent|racontent|contiennent)"
    r"|qu['’]ai-je\s+(?:écrit|noté|appris)|qu['’]est-ce que\s+j['’]ai\s+(?:écrit|noté|appris)"
    r"|what\s+(?:do|does)\s+(?:my|the)\s+notes?\s+say"
    r"|what\s+(?:did|have)\s+i\s+(?:write|written|wrote|note|noted|learn|learned|learnt))"
    r"\s+(?:sur|à propos d[eu'’]|au sujet d[eu'’]|concernant|about|on|regarding)\s*(?P<subject>.+?)\s*[?!.]*$",
    re.IGNORECASE,
)
_TOPIC_SPLIT = re.compile(r"\s*(?:,|\bou\b|\bor\b|\bet\b|\band\b)\s*", re.IGNORECASE)
_TAG = re.compile(r"(?<![\w&])#([\w/-]*[^\W\d][\w/-]*)")
_FOLDER = re.compile(
    r"\b(?:dans le dossier|du dossier|in (?:the )?folder|in the)\s+[«\"']?([\w ./-]+?)[»\"']?"
    r"(?:\s+folder)?(?=[?.!,]|$)",
    re.I,
)
_TYPE_WORDS = {
    NoteType.INSIGHT: ("insight", "insights"),
    NoteType.SYNAPSE: ("synapse", "synapses"),
    NoteType.SYNTHESIS: ("synthèses hebdomadaires", "weekly synthesis", "syntheses"),
    NoteType.CONVERSATION: ("conversations sauvegardées", "saved conversations"),
    NoteType.BRIEFING: ("briefings", "daily briefing"),
}
_FOLLOWUP_START = re.compile(
    r"^\s*(et|mais|alors|ok|and|but|so|what about|how about|plus de d[ée]tails|tell me more|pourquoi|why|"
    r"tu as plus|as-tu plus|peux-tu d[ée]tailler|d[ée]taille|more details|can you elaborate)\b",
    re.IGNORECASE,
)
_PRONOUNS = frozenset("il elle ils elles ça cela ce celui celle ceux it its this that they them those".split())
FOLLOWUP_MAX_TERMS = 4


def detect_intent(text: str) -> Intent:
    lowered = text.lower()
    if any(re.search(p, lowered) for p in _SUMMARY_PATTERNS):
        return Intent.SUMMARY
    if any(re.search(p, lowered) for p in _LIST_PATTERNS):
        return Intent.LIST
    return Intent.ANSWER


def extract_topics(text: str) -> list[str]:
    """The alternatives of a listing question: "… où je parle de levain ou de fermentation" → both."""
    match = _TOPIC_AFTER.search(text.strip().rstrip("?!. "))
    if not match:
        return []
    parts = [
        re.sub(r"^(?:(?:des|du|de|les|la|le|the)\b|[ld]['’])\s*", "", p.strip(), flags=re.I)
        for p in _TOPIC_SPLIT.split(match.group(1))
    ]
    return [p for p in parts if lexical.analyze(p)]


def is_followup(question: str, history: list[str]) -> bool:
    """A short or elliptic question that leans on the previous turns for its topic."""
    if not history:
        return False
    terms = lexical.analyze(question)
    words = set(re.findall(r"\w+", question.lower()))
    return (
        bool(_FOLLOWUP_START.search(question))
        or (len(terms) <= FOLLOWUP_MAX_TERMS and bool(words & _PRONOUNS))
        or len(terms) <= 2
    )


def understand(question: str, now: datetime, history: list[str] | None = None, topic: str = "") -> QueryPlan:
    """Read what the question asks for. ``history``: previous retrieval queries; ``topic``: previous main note title."""
    history = history or []
    text = question.strip()
    found = parse_date_range(text, now)
    retrieval = strip_date_expression(text, found) if found else text
    tags = [t.lower() for t in _TAG.findall(retrieval)]
    retrieval = _TAG.sub(lambda m: m.group(1).replace("/", " "), retrieval)
    folders = [m.strip() for m in _FOLDER.findall(retrieval)]
    if subject := _ABOUT_MY_NOTES.match(retrieval.strip()):
        retrieval = subject.group("subject")
    followup = is_followup(text, history)
    if followup:
        # Retrieval needs the topic; the prompt keeps the user's own wording.
        retrieval = f"{topic or history[-1]} {retrieval}".strip()
    return QueryPlan(
        question=text,
        retrieval_query=retrieval.strip() or text,
        language=detect_language(text),
        intent=detect_intent(text),
        since=found.start if found else None,
        until=found.end if found else None,
        dated=found.matched if found else "",
        tags=tags,
        folders=folders,
        types=[t for t, words in _TYPE_WORDS.items() if any(w in text.lower() for w in words)],
        topics=extract_topics(text),
        is_followup=followup,
    )


def existing_folders(plan: QueryPlan, vault: Path) -> QueryPlan:
    """The plan with only the folders the vault has (by name, case aside, as the vault spells them): « in the
    editor », « in the fridge » read as folders filtered every note out, and the question was refused."""
    if not plan.folders:
        return plan
    kept = []
    for folder in plan.folders:
        parts = [p for p in folder.strip("/").split("/") if p]
        found = vault
        for part in parts:
            match = next((c for c in _subfolders(found) if c.name.casefold() == part.casefold()), None)
            if match is None:
                break
            found = match
        else:
            kept.append(found.relative_to(vault).as_posix())
    return plan.model_copy(update={"folders": kept})


def _subfolders(folder: Path) -> list[Path]:
    try:
        return [c for c in folder.iterdir() if c.is_dir()]
    except OSError:
        return []


def asks_latest(plan: QueryPlan) -> bool:
    """« mes dernières notes », "latest", "recent": a summary of the newest notes without a date."""
    return any(w in plan.question.lower() for w in ("dernières", "latest", "recent"))


def names_only_a_date(plan: QueryPlan) -> bool:
    """« Qu'est-ce que j'ai mardi ? »: once its date is read, the question names nothing else."""
    return plan.intent == Intent.ANSWER and plan.since is not None and not query_terms(plan.retrieval_query)


def search_request(
    plan: QueryPlan, query: str, k: int, memory: bool = False, guard_order: bool = True
) -> SearchRequest:
    """``query`` searched with ``plan``'s filters (its dates already read: the search parses none)."""
    return SearchRequest(
        query=query,
        k=k,
        tags=plan.tags,
        folders=plan.folders,
        types=plan.types,
        since=plan.since,
        until=plan.until,
        parse_dates=False,
        memory=memory,
        guard_order=guard_order,
    )
