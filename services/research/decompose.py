"""The model's sub-questions, as strict JSON validated here; ``None`` whenever its output is unusable.

Small local models loop, repeat the question, answer it instead of splitting it, or wrap the JSON in prose
(Khoj saw the same in its research mode): anything but a JSON list of 1–5 distinct, self-standing questions
is refused, and the caller falls back to the rules (``services.research.split``).
"""

from __future__ import annotations

import json
import logging
import re

from pydantic import BaseModel, Field, ValidationError, field_validator

from services.llm.client import CancelScope, Generator
from services.llm.models import ChatMessage, GenerationError, GenerationRequest, Priority
from services.research import prompts
from services.research.split import MAX_SUB_QUESTIONS
from services.retrieval import lexical

log = logging.getLogger(__name__)
PLAN_TOKENS = 220  # five short questions in JSON
FOLLOWUP_TOKENS = 120
MAX_FOLLOWUPS = 2
_JSON = re.compile(r"\{.*\}|\[.*\]", re.S)
_KEYS = ("sous_questions", "sub_questions", "questions", "subquestions")


class SubQuestions(BaseModel):
    """What the model must give back: distinct questions of a few words to a sentence each."""

    questions: list[str] = Field(max_length=MAX_SUB_QUESTIONS)

    @field_validator("questions")
    @classmethod
    def _usable(cls, questions: list[str]) -> list[str]:
        kept: list[str] = []
        seen: set[tuple[str, ...]] = set()
        for question in questions:
            text = " ".join(str(question).split())
            terms = tuple(lexical.analyze(text))
            if not 3 <= len(text) <= 300 or not terms:
                raise ValueError(f"not a search: {text!r}")
            if terms not in seen:
                seen.add(terms)
                kept.append(text)
        return kept


def parse_sub_questions(output: str, limit: int = MAX_SUB_QUESTIONS) -> list[str] | None:
    """The questions of ``output`` (a JSON object under one of ``_KEYS``, or a bare list); None if unusable."""
    match = _JSON.search(output or "")
    if match is None:
        return None
    try:
        data = json.loads(match.group())
        if isinstance(data, dict):
            data = next((data[k] for k in _KEYS if k in data), None)
        if not isinstance(data, list) or len(data) > limit or not all(isinstance(q, str) for q in data):
            return None
        return SubQuestions(questions=data).questions
    except (json.JSONDecodeError, ValidationError):
        return None


def plan_by_model(generator: Generator, question: str, language: str, scope: CancelScope | None) -> list[str] | None:
    """The model's decomposition of ``question``; None when its output is unusable or the call fails. One
    sub-question that only repeats the question is no decomposition either."""
    messages = [
        ChatMessage(role="system", content=prompts.PLAN_SYSTEM[language]),
        ChatMessage(role="user", content=question),
    ]
    found = _ask(generator, messages, PLAN_TOKENS, scope)
    if found is None or not found:
        return None
    if len(found) == 1 and set(lexical.analyze(found[0])) == set(lexical.analyze(question)):
        return None
    return found


def followups_by_model(
    generator: Generator, question: str, searched: list[tuple[str, list[str]]], language: str, scope: CancelScope | None
) -> list[str] | None:
    """What is still missing, in at most ``MAX_FOLLOWUPS`` new searches; None when the output is unusable."""
    nothing = prompts.NOTHING_FOUND_WORD[language]
    lines = [f"- {text} → {', '.join(titles) if titles else nothing}" for text, titles in searched]
    user = prompts.FOLLOWUP_USER[language].format(question=question, searched="\n".join(lines))
    messages = [
        ChatMessage(role="system", content=prompts.FOLLOWUP_SYSTEM[language]),
        ChatMessage(role="user", content=user),
    ]
    return _ask(generator, messages, FOLLOWUP_TOKENS, scope, limit=MAX_FOLLOWUPS)


def _ask(
    generator: Generator,
    messages: list[ChatMessage],
    max_tokens: int,
    scope: CancelScope | None,
    limit: int = MAX_SUB_QUESTIONS,
) -> list[str] | None:
    request = GenerationRequest(messages=messages, max_tokens=max_tokens, priority=Priority.CHAT, structured=True)
    try:
        output = generator.text(request, scope=scope).text
    except GenerationError as exc:
        log.info("research: the model's plan failed (%s); the rules decide", exc)
        return None
    found = parse_sub_questions(output, limit)
    if found is None:
        log.info("research: unusable plan from the model: %.200r", output)
    return found
