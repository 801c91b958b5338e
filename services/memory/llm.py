"""The model, as memory sees it: a plain callable from a prompt to a ``Completion``.

Consolidation and the briefing take any ``AskFn``, so tests can hand them the bundled model through the
real worker, or an OpenAI-compatible test server. Every prompt is redacted by the caller beforehand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from services.llm.backend import Backend
from services.llm.models import ChatMessage, GenerationRequest, GenerationResult, Priority


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


AskFn = Callable[[str, str, int], Completion]  # (system, prompt, max_tokens) → completion
GenerateFn = Callable[[GenerationRequest], GenerationResult]


class ModelUnavailable(RuntimeError):
    """No model can run (none configured, the worker is down): the deterministic parts go on without it."""


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate (~4 characters a token), for budgets decided before the call."""
    return max(1, len(text) // 4) if text else 0


def ask_through(generate: GenerateFn, temperature: float = 0.0) -> AskFn:
    """An ``AskFn`` over the generation client (the ``generate`` queue), at learner priority."""

    def ask(system: str, prompt: str, max_tokens: int) -> Completion:
        request = GenerationRequest(
            messages=[ChatMessage(role="system", content=system), ChatMessage(role="user", content=prompt)],
            max_tokens=max_tokens,
            temperature=temperature,
            priority=Priority.LEARNER,
        )
        result = generate(request)
        return Completion(result.text.strip(), result.prompt_tokens, result.completion_tokens)

    return ask


def ask_backend(backend: Backend, temperature: float = 0.0) -> AskFn:
    """An ``AskFn`` straight over a backend in this process (benchmarks, tests)."""

    def ask(system: str, prompt: str, max_tokens: int) -> Completion:
        messages = [ChatMessage(role="system", content=system), ChatMessage(role="user", content=prompt)]
        stream = backend.stream(messages, max_tokens=max_tokens, temperature=temperature)
        text = "".join(stream)
        return Completion(text.strip(), stream.counts.prompt_tokens, stream.counts.completion_tokens)

    return ask
