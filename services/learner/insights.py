"""Insights for one note: its semantic field, questions strictly inside it, answers from the vault (else the
web) through the chat engine, and the ``obsirag/insights/YYYY-MM/<Title>_<YYYYMMDD>.md`` file they make.

The model is small and may write nonsense: every step checks what it got, falls back to what the note
itself says (field, template questions) and rejects empty or generic answers with a recorded reason.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from services.catalog.models import Provenance, Source
from services.chat import prompts as chat_prompts
from services.chat.engine import ChatAnswer, SearchFn
from services.config import Settings
from services.indexing.entities import note_segments
from services.learner import prompts
from services.learner.pacing import LearnerModel
from services.retrieval import lexical
from services.retrieval.search import SearchRequest, SearchResponse
from services.vault.artifacts import is_generated
from services.vault.models import NoteType, ParsedNote

NOTE_CHARS = 1500  # of the note's text in a prompt: the small model reads slowly, its start says most
MIN_NOTE_CHARS = 300
PROMPT_OVERHEAD_TOKENS = 250  # the instructions around the note's text
CHARS_PER_TOKEN = 3.2  # conservative for French (services.chat.context uses the same figure)
MAX_QUESTIONS = 3
MIN_ANSWER_WORDS = 6
MIN_DISTINCT_WORDS = 0.35  # below this share of distinct words, the text is a loop
_FIELD_LINE = re.compile(r"^\W*(domaine|domain|concepts?|angle)\s*:\s*(.+)$", re.I | re.M)
_GENERIC = re.compile(
    r"je ne sais pas|je n'ai pas (?:assez |d')?(?:d')?informations?|pas assez d'informations"
    r"|en tant qu'(?:ia|assistant)|i don'?t know|i do not know|not enough information|as an ai\b|as a language model",
    re.I,
)

AskFn = Callable[[str], "ChatAnswer"]
USERS_FILES = [NoteType.NOTE, NoteType.ATTACHMENT]


def among_users_files(search: SearchFn) -> SearchFn:
    """The learner's searches, among the user's notes and documents only: for a note's own questions its
    insight of last week (the same words) came first, and an insight may not rest on ObsiRAG's own files."""

    def search_users_files(request: SearchRequest) -> SearchResponse:
        return search(request if request.types else request.model_copy(update={"types": USERS_FILES}))

    return search_users_files


@dataclass
class SemanticField:
    domain: str
    concepts: list[str]
    angle: str
    source: str  # "model", or "note" when the model's lines did not hold up

    def terms(self) -> set[str]:
        return set(lexical.analyze(" ".join([self.domain, *self.concepts])))


@dataclass
class InsightAnswer:
    question: str
    answer: str
    provenance: Provenance
    notes: list[Source] = field(default_factory=list)
    web: list[Source] = field(default_factory=list)
    read: list[str] = field(default_factory=list)  # URLs of the web pages read and summarised, not only searched


@dataclass
class Questions:
    asked: list[str]
    source: str  # "model" or "template"
    rejected: list[str] = field(default_factory=list)


def note_excerpt(note: ParsedNote, chars: int = NOTE_CHARS) -> str:
    """The note's prose as one line: no title heading, code, tags, link targets or markup."""
    segments = note_segments(note.markdown)
    if segments and segments[0] == note.title:
        segments = segments[1:]
    return " ".join(" ".join(segments).split())[:chars]


def note_prompt(note: ParsedNote, language: str, chars: int = NOTE_CHARS) -> str:
    tags = ", ".join(note.tags) or "-"
    return prompts.NOTE_HEADER[language].format(title=note.title, tags=tags, text=note_excerpt(note, chars))


def prompt_chars(settings: Settings) -> int:
    """How much of a note fits a prompt: at most ``NOTE_CHARS``, less with a small context window."""
    budget = settings.llm_context_tokens - settings.llm_max_tokens - PROMPT_OVERHEAD_TOKENS
    return max(MIN_NOTE_CHARS, min(NOTE_CHARS, int(budget * CHARS_PER_TOKEN)))


# --- semantic field ----------------------------------------------------------------------------------


def study_note(
    model: LearnerModel, note: ParsedNote, language: str, n: int, asked: list[str], chars: int = NOTE_CHARS
) -> tuple[SemanticField, Questions]:
    """One model call: the note's semantic field (domain, key concepts, angle), then up to ``n`` questions
    strictly inside it. Each part is checked, and replaced by what the note itself says when it fails."""
    n = max(1, min(n, MAX_QUESTIONS))
    reply = model.ask(prompts.STUDY_SYSTEM[language].format(n=n), note_prompt(note, language, chars))
    field_ = parse_field(reply, note)
    return field_, parse_questions(reply, field_, language, n, asked)


def parse_field(reply: str, note: ParsedNote) -> SemanticField:
    """The model's three lines, checked against the note; the note's own field when they do not hold up."""
    fallback = field_from_note(note)
    lines = {key.lower().rstrip("s"): value.strip() for key, value in _FIELD_LINE.findall(reply)}
    note_terms = set(lexical.analyze(f"{note.title} {note.body}"))
    concepts = [c.strip(" .;") for c in lines.get("concept", "").split(",")]
    concepts = [c for c in concepts if c and set(lexical.analyze(c)) & note_terms][:6]
    domain = lines.get("domaine") or lines.get("domain") or ""
    if not concepts or not domain or len(domain) > 80:
        return fallback
    return SemanticField(domain, concepts, lines.get("angle", "")[:200] or fallback.angle, "model")


def field_from_note(note: ParsedNote) -> SemanticField:
    """What the note says of its field without a model: tags or folder, its most frequent words, its title."""
    domain = note.tags[0] if note.tags else (note.folder or note.title)
    return SemanticField(domain.replace("/", " "), key_words(note), note.title, "note")


def key_words(note: ParsedNote, count: int = 5) -> list[str]:
    """The note's most frequent content words (one surface form per stem), title words first."""
    surface: dict[str, Counter[str]] = {}
    for word in re.findall(r"[^\W\d_][\w'-]{4,}", f"{note.title} {note.title} {note.body}".lower()):
        if lexical.fold_accents(word) in lexical.STOP_WORDS:
            continue
        for term in lexical.analyze(word)[:1]:
            surface.setdefault(term, Counter())[word] += 1
    ranked = sorted(surface.values(), key=lambda forms: -sum(forms.values()))
    return [forms.most_common(1)[0][0] for forms in ranked[:count]]


# --- questions ---------------------------------------------------------------------------------------


def parse_questions(reply: str, field_: SemanticField, language: str, n: int, asked: list[str]) -> Questions:
    known = [set(lexical.analyze(q)) for q in asked]
    kept, rejected = [], []
    for line in reply.splitlines():
        question = re.sub(r"^\W*(?:\d+[.)]\s*)?(?:question\s*\d*\s*:)?\s*", "", line, flags=re.I).strip()
        reason = _question_problem(question, field_, known)
        if reason:
            if question:
                rejected.append(f"{question[:80]!r}: {reason}")
            continue
        kept.append(question)
        known.append(set(lexical.analyze(question)))
    if kept:
        return Questions(kept[:n], "model", rejected)
    templates = [prompts.QUESTION_TEMPLATE[language].format(concept=c, domain=field_.domain) for c in field_.concepts]
    fresh = [q for q in templates if set(lexical.analyze(q)) not in known]
    return Questions(fresh[:n], "template", rejected)


def _question_problem(question: str, field_: SemanticField, known: list[set[str]]) -> str | None:
    if not question.endswith("?") or len(question.split()) < 4:
        return "not a question"
    terms = set(lexical.analyze(question))
    if not terms & field_.terms():
        return "outside the note's field"
    if terms in known:
        return "already asked"
    return None


# --- answers -----------------------------------------------------------------------------------------


def answer_question(ask: AskFn, question: str) -> InsightAnswer | str:
    """The chat engine's answer, or why it was rejected (empty, generic, a loop, nothing found)."""
    answer = ask(question)
    text = drop_echo(answer_text(answer.answer), question)
    problem = answer_problem(question, text, answer.provenance)
    if problem:
        return problem
    # An insight rests on the user's notes: ObsiRAG's own files (other insights, syntheses…) are no source.
    notes = [s for s in answer.sources if s.path and not is_generated(s.path)]
    web = [s for s in answer.sources if s.url]
    provenance = answer.provenance
    if provenance in (Provenance.VAULT, Provenance.BOTH) and not notes:
        if not web:
            return "found only in ObsiRAG's own notes"
        provenance = Provenance.WEB
    return InsightAnswer(question, text, provenance, notes, web, list(answer.read_urls))


def answer_text(answer: str) -> str:
    """The answer without the chat's fixed "not in your vault" and "from the web" sentences."""
    text = answer.strip()
    for fixed in [*chat_prompts.NOT_IN_VAULT.values(), *chat_prompts.WEB_INTRO.values()]:
        text = text.replace(fixed, "")
    return text.strip()


def drop_echo(text: str, question: str) -> str:
    """Without a first sentence that only repeats the question (small models often start that way)."""
    match = re.match(r"\s*([^.?!\n]*[?])\s*", text)
    if match and set(lexical.analyze(match[1])) <= set(lexical.analyze(question)):
        return text[match.end() :].strip()
    return text


def answer_problem(question: str, text: str, provenance: Provenance) -> str | None:
    if provenance == Provenance.NONE:
        return "no answer in the vault nor on the web"
    words = text.split()
    if not words:
        return "empty answer"
    if len(words) < MIN_ANSWER_WORDS:
        return f"too short to answer anything ({len(words)} words)"
    if _GENERIC.search(text) and len(words) < 40:
        return "generic answer"
    if len({w.lower() for w in words}) / len(words) < MIN_DISTINCT_WORDS:
        return "repetitive text"
    terms = set(lexical.analyze(text))
    if terms <= set(lexical.analyze(question)):
        return "only repeats the question"
    return None


def combined_provenance(provenances: list[Provenance]) -> Provenance:
    kinds = {p for p in provenances if p != Provenance.NONE}
    if Provenance.BOTH in kinds or {Provenance.VAULT, Provenance.WEB} <= kinds:
        return Provenance.BOTH
    return next(iter(kinds), Provenance.NONE)
