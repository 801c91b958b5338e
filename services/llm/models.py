"""What a generation request, its stream of events, its result and the worker's state look like."""

from __future__ import annotations

import uuid
from enum import IntEnum
from typing import Literal

from pydantic import BaseModel, Field


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class Priority(IntEnum):
    """Huey priority of a generation: higher runs first, and a chat preempts a learner between tokens."""

    LEARNER = 0
    CHAT = 10


class GenerationRequest(BaseModel):
    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    messages: list[ChatMessage]
    max_tokens: int
    temperature: float = 0.0
    priority: Priority = Priority.CHAT
    stop: list[str] = Field(default_factory=list)
    # JSON or another structured output: decoded without repetition control and never stopped as a loop
    # (its keys come back on every item).
    structured: bool = False
    submitted_at: float | None = None  # epoch seconds, set by the client; gives the time spent queued
    # Set by a client that keeps a heartbeat key alive while it waits: the worker drops the request
    # when that key expires (the caller was killed or gave up without cancelling).
    watched: bool = False


class StreamEvent(BaseModel):
    """One entry of a request's Redis stream: a piece of text, prompt-reading progress, or the terminal
    ``done``/``error``."""

    kind: Literal["token", "progress", "done", "error"]
    text: str = ""
    prompt_done: int = 0  # progress: prompt tokens read so far, of ``prompt_tokens``
    finish_reason: str | None = None  # "stop", "length", "cancelled", "repetition" or "echo" (stopped by the worker)
    prompt_tokens: int = 0
    cached_tokens: int = 0  # done: prompt tokens taken from the cache of an earlier request, not read again
    completion_tokens: int = 0
    ttft_ms: float | None = None  # from the worker taking the request (model load included) to the first token
    tokens_per_s: float | None = None
    error: str | None = None
    model: str | None = None
    backend: str | None = None
    queued_ms: float | None = None  # from submit to the worker taking the request

    @property
    def terminal(self) -> bool:
        return self.kind in ("done", "error")

    @property
    def fraction(self) -> float:
        """Share of the prompt read, for a progress event."""
        return min(1.0, self.prompt_done / self.prompt_tokens) if self.prompt_tokens else 0.0


class GenerationResult(BaseModel):
    text: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    ttft_ms: float | None
    tokens_per_s: float | None
    model: str | None
    backend: str | None


class Capability(BaseModel):
    """Whether the model writes the chat's answers, and how that is known (``services.llm.capability``)."""

    can_write: bool | None  # None: not known yet (the check runs, or could not run)
    reason: Literal["bundled", "setting", "check", "checking", "unchecked"]
    passed: int = 0  # probes passed, of ``probes`` (``reason == "check"``)
    probes: int = 0
    detail: str = ""  # what went wrong: the first failed probe's reply, or the check's error


class WorkerState(BaseModel):
    """What the mlx worker publishes with its heartbeat (``obsirag status``, the dashboard)."""

    backend: str
    model: str
    loaded: bool = False
    busy: bool = False
    current_request: str | None = None  # the generation running now (the innermost one during a preemption)
    queue_depth: int = 0
    last_tokens_per_s: float | None = None
    pid: int = 0
    instance: str = ""  # unique per worker process: a caller whose request it owned notices a restart
    requests_served: int = 0
    blas: str | None = None  # the matrix library MLX's CPU backend binds to (None: its own, or not loaded yet)
    prompt_tokens_per_s: float | None = None  # prompt-reading rate: measured, or the backend's estimate
    prompt_rate_measured: bool = False
    prompt_budget: int | None = None  # most prompt tokens a caller should send: read within the target TTFT
    answer_tokens: int | None = None  # most tokens an answer should ask for (the worker's settings)
    context_tokens: int | None = None  # the worker's context window (prompt + answer)
    tokenizer_path: str | None = None  # the model's tokenizer.json, for callers that count prompt tokens
    capability: Capability | None = None  # whether the model writes the chat's answers (else they are quoted)


class GenerationError(RuntimeError):
    """The generation failed: the worker reported an error, died, or the caller's wait timed out."""
