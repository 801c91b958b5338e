"""A research answer's trail as the catalog keeps it (``turns.research``): each sub-question, how it was
searched, what the guard decided and which notes were read for it (``services.research``)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

SubOutcome = Literal["answer", "closest", "refused", "skipped"]  # skipped: stopped before its search


class FoundNote(BaseModel):
    path: str
    title: str
    n: int | None = None  # its citation number in the answer, when the answer cites it
    page: int | None = None


class SubQuestion(BaseModel):
    text: str
    round: int = 1  # 1: the decomposition; 2: the follow-up round (what was still missing)
    method: Literal["model", "rules", "question"] = "rules"  # the model wrote it, the rules split, or the question
    query: str = ""  # what the search saw (dates, tags and folders taken out as filters)
    since: datetime | None = None
    until: datetime | None = None
    tags: list[str] = Field(default_factory=list)
    folders: list[str] = Field(default_factory=list)
    outcome: SubOutcome = "skipped"
    confidence: float | None = None
    notes: list[FoundNote] = Field(default_factory=list)  # read for it, best first

    @property
    def covered(self) -> bool:
        return self.outcome in ("answer", "closest") and bool(self.notes)


class ResearchStep(BaseModel):
    """One visible step of a research run, as it happens (the chat, ``ask --research`` on stderr, ``steps``)."""

    kind: Literal["plan", "search", "followup", "answer", "stopped"]
    text: str  # the step in one line, in the question's language
    sub_questions: list[str] = Field(default_factory=list)  # plan, followup: the sub-questions it adds
    sub: SubQuestion | None = None  # search: the sub-question and what was found for it
    index: int | None = None  # search: the sub-question's number (1…)
