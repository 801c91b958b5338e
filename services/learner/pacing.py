"""Every model call of the learner: learner priority, a pause before each call but the first, and a meter.

The pause waits on the learner's stop event, so stopping the process never waits for it to end.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from services.config import Settings
from services.llm.client import CancelScope, Generator, collect
from services.llm.models import ChatMessage, GenerationRequest, GenerationResult, Priority, StreamEvent, WorkerState


class LearnerStopped(RuntimeError):
    """The learner was asked to stop during a pause: the cycle ends where it is, its state is saved."""


@dataclass
class GenerationMeter:
    """What the model calls of a cycle cost: the benchmark's generation share and token counts."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    pause_seconds: float = 0.0

    def add(self, prompt_tokens: int, completion_tokens: int, seconds: float) -> None:
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.seconds += seconds


class LearnerModel:
    """The learner's ``Generator``: the client's, at learner priority, after a pause, metered.

    ``ask`` is the one-shot prompt of insights, synapses and the synthesis; the chat engine the learner
    builds holds the model itself, so its answers and checks are paced and metered the same way.
    """

    def __init__(self, settings: Settings, generator: Generator, stop: threading.Event) -> None:
        self.settings = settings
        self.generator = generator
        self.stop = stop
        self.meter = GenerationMeter()

    def ask(self, system: str, prompt: str, max_tokens: int | None = None) -> str:
        """The model's answer to one prompt, stripped (generation errors propagate)."""
        request = GenerationRequest(
            messages=[ChatMessage(role="system", content=system), ChatMessage(role="user", content=prompt)],
            max_tokens=max_tokens or self.settings.llm_max_tokens,
            temperature=self.settings.llm_temperature,
        )
        return self.text(request).text.strip()

    def stream(
        self, request: GenerationRequest, timeout: float | None = None, scope: CancelScope | None = None
    ) -> Iterator[StreamEvent]:
        """The client's stream, at learner priority whatever the caller asked for."""
        self.pause()
        started = time.perf_counter()
        learner = request.model_copy(update={"priority": Priority.LEARNER})
        for event in self.generator.stream(learner, timeout, scope):
            if event.terminal:
                self.meter.add(event.prompt_tokens, event.completion_tokens, time.perf_counter() - started)
            yield event

    def text(
        self, request: GenerationRequest, timeout: float | None = None, scope: CancelScope | None = None
    ) -> GenerationResult:
        return collect(self.stream(request, timeout, scope))

    def state(self) -> WorkerState | None:
        return self.generator.state()

    def pause(self) -> None:
        """Wait ``learn_pause_seconds`` before every call but the first; raises LearnerStopped on stop."""
        if self.stop.is_set():
            raise LearnerStopped()
        if self.meter.calls and self.settings.learn_pause_seconds > 0:
            started = time.perf_counter()
            if self.stop.wait(self.settings.learn_pause_seconds):
                raise LearnerStopped()
            self.meter.pause_seconds += time.perf_counter() - started
