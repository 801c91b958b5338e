"""The model, as memory sees it: a plain callable from a prompt to a ``Completion``.

Consolidation and the briefing take any ``AskFn``, so tests can hand them the bundled model through the
real worker, or an OpenAI-compatible test server. Every prompt is redacted by the caller beforehand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from services.llm.backend import Backend
from services.llm.client import Generator, StreamGenerator, backend_events
from services.llm.models import ChatMessage, GenerationRequest, Priority


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


AskFn = Callable[[str, str, int], Completion]  # (system, prompt, max_tokens) → completion


class ModelUnavailable(RuntimeError):
    """No model can run (none configured, the worker is down): the deterministic parts go on without it."""


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate (~4 characters a token), for budgets decided before the call."""
    return max(1, len(text) // 4) if text else 0


def ask_through(generator: Generator, temperature: float = 0.0) -> AskFn:
    """An ``AskFn`` over a generator (the running system's: the ``generate`` queue), at learner priority;
    a failed generation raises ``GenerationError``."""

    def ask(system: str, prompt: str, max_tokens: int) -> Completion:
        request = GenerationRequest(
            messages=[ChatMessage(role="system", content=system), ChatMessage(role="user", content=prompt)],
            max_tokens=max_tokens,
            temperature=temperature,
            priority=Priority.LEARNER,
            structured=True,  # JSON: its keys repeat on every fact
        )
        result = generator.text(request)
        return Completion(result.text.strip(), result.prompt_tokens, result.completion_tokens)

    return ask


def ask_backend(backend: Backend, temperature: float = 0.0) -> AskFn:
    """An ``AskFn`` straight over a backend in this process (benchmarks, tests)."""
    return ask_through(StreamGenerator(backend_events(backend)), temperature)
