"""Every model call of the learner: learner priority, a pause before each call but the first, and a meter.

The pause waits on the learner's stop event, so stopping the process never waits for it to end.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from services.config import Settings
from services.llm.models import ChatMessage, GenerationRequest, GenerationResult, Priority, StreamEvent

GenerateFn = Callable[[GenerationRequest], GenerationResult]
StreamFn = Callable[[GenerationRequest], Iterator[StreamEvent]]


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
    """Asks the model for the learner: one-shot prompts (``ask``) and the chat engine's streams (``stream``)."""

    def __init__(self, settings: Settings, generate: GenerateFn, stream: StreamFn, stop: threading.Event) -> None:
        self.settings = settings
        self._generate = generate
        self._stream = stream
        self.stop = stop
        self.meter = GenerationMeter()

    def ask(self, system: str, prompt: str, max_tokens: int | None = None) -> str:
        """The model's answer to one prompt, stripped (generation errors propagate)."""
        self.pause()
        request = GenerationRequest(
            messages=[ChatMessage(role="system", content=system), ChatMessage(role="user", content=prompt)],
            max_tokens=max_tokens or self.settings.llm_max_tokens,
            temperature=self.settings.llm_temperature,
            priority=Priority.LEARNER,
        )
        started = time.perf_counter()
        result = self._generate(request)
        self.meter.add(result.prompt_tokens, result.completion_tokens, time.perf_counter() - started)
        return result.text.strip()

    def stream(self, request: GenerationRequest) -> Iterator[StreamEvent]:
        """The chat engine's stream function, at learner priority whatever the engine asked for."""
        self.pause()
        started = time.perf_counter()
        for event in self._stream(request.model_copy(update={"priority": Priority.LEARNER})):
            if event.terminal:
                self.meter.add(event.prompt_tokens, event.completion_tokens, time.perf_counter() - started)
            yield event

    def pause(self) -> None:
        """Wait ``learn_pause_seconds`` before every call but the first; raises LearnerStopped on stop."""
        if self.stop.is_set():
            raise LearnerStopped()
        if self.meter.calls and self.settings.learn_pause_seconds > 0:
            started = time.perf_counter()
            if self.stop.wait(self.settings.learn_pause_seconds):
                raise LearnerStopped()
            self.meter.pause_seconds += time.perf_counter() - started
