"""Cards proposed for a note: the model's, as validated JSON, else the note's own definitions and sections; never
a card the note's deck already has (same question, case and spacing aside)."""

from __future__ import annotations

import json
import logging
import re

from pydantic import BaseModel, Field, ValidationError

from services.cards.deck import Card, normalized
from services.indexing.chunking import split_sections
from services.llm.client import Generator
from services.llm.models import ChatMessage, GenerationError, GenerationRequest, Priority
from services.vault.models import ParsedNote

log = logging.getLogger(__name__)
MAX_CARDS = 12
NOTE_CHARS = 6000  # of the note, what the model reads
CARD_TOKENS = 700
_DEFINITION = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?(?P<term>[^:*_\n]{2,60}?)(?:\*\*|__)?\s*(?::|—|–| - )\s+(?P<text>.{8,300})$"
)
_ROW = re.compile(r"^\s*\|\s*(?P<term>[^|]{2,60}?)\s*\|\s*(?P<text>[^|]{8,300}?)\s*\|\s*$")  # a glossary table
_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")  # the line under a table's header row
_BLOCK_ID = re.compile(r"\s+\^(?P<id>[\w-]+)\s*$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_JSON = re.compile(r"\{.*\}|\[.*\]", re.S)
PROMPT = {
    "fr": "Tu écris des cartes de révision à partir d'une note. Au plus {n} cartes, chacune une question précise et "
    "sa réponse courte, tirées uniquement de la note, en français. Réponds uniquement en JSON : "
    '{{"cartes": [{{"question": "…", "reponse": "…", "section": "titre de la section"}}]}}',
    "en": "You write study cards from a note. At most {n} cards, each a precise question and its short answer, "
    'taken only from the note. Reply in JSON only: {{"cards": [{{"question": "…", "answer": "…", "section": "the '
    "section's heading\"}}]}}",
}
ASK = {"fr": "Que signifie « {term} » ?", "en": "What is “{term}”?"}


class _Proposed(BaseModel):
    question: str = Field(min_length=5, max_length=300)
    answer: str = Field(min_length=1, max_length=600)
    section: str = Field("", max_length=200)


def make_cards(
    note: ParsedNote, language: str, existing: list[Card], generator: Generator | None = None
) -> tuple[list[Card], str]:
    """New cards for ``note`` and who made them ("model" or "rules")."""
    headings = _headings(note)
    proposed = _by_model(generator, note, language, headings) if generator is not None else None
    method = "model" if proposed else "rules"
    cards = proposed or _by_rules(note, language)
    seen = {normalized(card.question) for card in existing}
    fresh = []
    for card in cards:
        if normalized(card.question) not in seen:
            seen.add(normalized(card.question))
            fresh.append(card)
    return fresh[:MAX_CARDS], method


def _by_model(generator: Generator, note: ParsedNote, language: str, headings: set[str]) -> list[Card] | None:
    messages = [
        ChatMessage(role="system", content=PROMPT[language].format(n=MAX_CARDS)),
        ChatMessage(role="user", content=f"# {note.title}\n\n{note.body[:NOTE_CHARS]}"),
    ]
    request = GenerationRequest(messages=messages, max_tokens=CARD_TOKENS, priority=Priority.CHAT, structured=True)
    try:
        output = generator.text(request).text
    except GenerationError as exc:
        log.info("cards: the model failed (%s); the rules make them", exc)
        return None
    try:
        data = json.loads(_JSON.search(output).group())  # type: ignore[union-attr]
        items = data.get("cartes", data.get("cards")) if isinstance(data, dict) else data
        proposed = [_Proposed(answer=i.get("reponse", i.get("answer", "")), **_without(i)) for i in items]
    except (AttributeError, json.JSONDecodeError, TypeError, ValidationError):
        log.info("cards: unusable output from the model: %.200r", output)
        return None
    if not proposed or len(proposed) > MAX_CARDS:
        return None
    return [
        Card(p.question.strip(), p.answer.strip(), note.path, p.section if p.section in headings else "")
        for p in proposed
    ]


def _without(item: dict) -> dict:
    return {k: v for k, v in item.items() if k in ("question", "section")}


def _by_rules(note: ParsedNote, language: str) -> list[Card]:
    """``terme : définition`` lines, then each section's heading with its first sentences."""
    cards: list[Card] = []
    sections = split_sections(note.markdown)  # the reader drops block ids from the lines: read them from the body
    blocks = {
        m.string[: m.start()].strip(): m["id"] for line in note.body.splitlines() if (m := _BLOCK_ID.search(line))
    }
    for section in sections:
        heading = section.heading_path[-1] if section.heading_path else ""
        for i, line in enumerate(section.lines):
            following = section.lines[i + 1] if i + 1 < len(section.lines) else ""
            match = _DEFINITION.match(line) or (_ROW.match(line) if not _RULE.match(following) else None)
            if match and not line.lstrip().startswith("#"):
                block = blocks.get(line.strip())  # « … ^def-ndvi »: the card points at that block, not its section
                source = f"^{block}" if block else heading
                cards.append(
                    Card(ASK[language].format(term=match["term"].strip()), match["text"].strip(), note.path, source)
                )
    for section in sections:
        heading = section.heading_path[-1] if section.heading_path else ""
        text = " ".join(
            line.strip()
            for line in section.lines
            if line.strip() and not line.lstrip().startswith(("-", "*", "|", ">", "#"))
        )
        sentences = [s for s in _SENTENCE.split(text) if len(s.split()) >= 4]
        if heading and sentences:
            cards.append(Card(f"{note.title} — {heading} ?", " ".join(sentences[:2]), note.path, heading))
    return cards


def _headings(note: ParsedNote) -> set[str]:
    return {section.heading_path[-1] for section in split_sections(note.markdown) if section.heading_path}
