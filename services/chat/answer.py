"""What a chat question streams (``ChatEvent``) and ends with (``ChatAnswer``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from services.catalog.models import AnswerEntity, AnswerKind, AnswerMarks, MemoryUse, Provenance, Source
from services.catalog.research_models import ResearchStep, SubQuestion
from services.chat.query import QueryPlan


class ChatAnswer(AnswerMarks, BaseModel):
    thread_id: str
    turn_id: int | None = None
    question: str
    answer: str
    sources: list[Source] = Field(default_factory=list)
    provenance: Provenance
    main_note: str | None = None
    notes: list[Source] = Field(default_factory=list)  # listing/summary questions: the notes themselves
    entities: list[AnswerEntity] = Field(default_factory=list)  # who/what the sources mention, with related notes
    model: str | None = None
    backend: str | None = None
    timings: dict[str, float] = Field(default_factory=dict)
    plan: QueryPlan | None = None
    read_urls: list[str] = Field(default_factory=list)  # web pages read and summarised (not just their snippet)
    web: Literal["", "failed", "empty"] = ""  # the web search was asked for and failed / found nothing
    finish_reason: str | None = None  # "length": the answer stopped at the token cap
    grounding: dict[str, Any] | None = None  # the guard's decision and evidence (``Grounding.explain``)
    memory: list[MemoryUse] = Field(default_factory=list)  # remembered facts the prompt held ("mémoire utilisée")
    kind: AnswerKind | None = None  # quoted from the notes, written by the model, refused…
    research: list[SubQuestion] | None = None  # research mode: the sub-questions and the notes read for each
    steps: list[ResearchStep] = Field(default_factory=list)  # research mode: its steps, in order


class ChatEvent(BaseModel):
    kind: Literal["sources", "progress", "token", "done", "error", "step"]
    text: str = ""
    progress: float | None = None  # progress: share of the prompt the model has read (0–1)
    sources: list[Source] = Field(default_factory=list)
    answer: ChatAnswer | None = None
    partial: str = ""  # error: the answer generated before the failure, shown apart from the error's text
    step: ResearchStep | None = None  # step: one step of a research run, as it happens


class ChatFailed(RuntimeError):
    """The chat's stream ended with an error, or without its answer."""


def final_answer(events: Iterable[ChatEvent], missing: str = "the chat engine gave no answer") -> ChatAnswer:
    """The answer a chat's events end with, for callers that need it whole (the learner, MCP's ``ask``);
    ``ChatFailed`` with the error's text, or ``missing`` when no answer came."""
    for event in events:
        if event.kind == "error":
            raise ChatFailed(event.text)
        if event.kind == "done" and event.answer is not None:
            return event.answer
    raise ChatFailed(missing)
