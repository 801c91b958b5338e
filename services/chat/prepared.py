"""Everything the chat decides before the model runs, for one question."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

from services.catalog.models import AnswerKind, MemoryUse, Provenance, Source, Thread
from services.catalog.research_models import ResearchStep, SubQuestion
from services.chat.context import ContextBlock
from services.chat.grounding import Grounding
from services.chat.prompt_fit import PromptFit
from services.chat.prompts import NOT_IN_VAULT
from services.chat.query import QueryPlan
from services.llm.client import CancelScope
from services.llm.limits import PromptLimits
from services.llm.models import ChatMessage
from services.retrieval.fact_vectors import MemoryMatch


@dataclass
class Prepared:
    """Everything decided before the model runs."""

    plan: QueryPlan
    thread: Thread
    started: float
    fit: PromptFit  # the prompt's budget, history and what the model's prompt cache holds of it
    text: str = ""  # said before any generated text (a refusal, a list of notes)
    sources: list[Source] = field(default_factory=list)
    provenance: Provenance = Provenance.NONE
    main_note: str | None = None
    notes: list[Source] = field(default_factory=list)
    messages: list[ChatMessage] | None = None  # None: no model call
    map_batches: list[list[ContextBlock]] = field(default_factory=list)  # a summary too long for one prompt
    try_web: bool = False
    web: Literal["", "failed", "empty"] = ""
    read_urls: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    grounding: Grounding | None = None  # the guard's decision and evidence (answer questions)
    memory: list[MemoryUse] = field(default_factory=list)
    memory_matches: list[MemoryMatch] = field(default_factory=list)  # facts the search found close in meaning
    scope: CancelScope | None = None  # every generation of this question (stopped together)
    writes: bool = True  # the model writes the answer; False: it is quoted from the notes, without a model
    kind: AnswerKind | None = None  # None until decided: a model call makes it "written"
    any_date: bool = False  # the question's date dropped: no note of that date answered it
    research: list[SubQuestion] | None = None  # research mode: each sub-question and the notes read for it
    steps: list[ResearchStep] = field(default_factory=list)  # research mode: the steps shown as they happened

    def refuse(self, use_web: bool) -> None:
        """The vault does not answer: the refusal said at once, then the web when allowed."""
        self.text = NOT_IN_VAULT[self.plan.language]
        self.kind = AnswerKind.REFUSED
        self.try_web = use_web
        self.sources, self.main_note, self.messages, self.memory = [], None, None, []
        self.provenance = Provenance.NONE

    def lap(self, name: str) -> None:
        self.timings[name] = round((time.perf_counter() - self.started) * 1000, 2)

    @property
    def limits(self) -> PromptLimits:
        return self.fit.limits

    @property
    def cached_tokens(self) -> int:
        return self.fit.cached_tokens
