"""The backend interface every LLM runtime implements (MLX in-process, or an OpenAI-compatible server).

A backend turns chat messages into a stream of text pieces. It formats the prompt with the model's
chat template (or lets the server do it), counts tokens for the stats, and stops at the stop strings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from services.llm.models import ChatMessage


@dataclass
class TokenCounts:
    """Filled in by the backend while its stream is consumed."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # of the prompt, already read for an earlier request (the prompt cache)
    finish_reason: str | None = None  # "stop" (end of turn or a stop string) or "length"


PromptProgress = Callable[[int, int], None]  # (prompt tokens read, prompt tokens in all)


@dataclass(frozen=True)
class Decoding:
    """Repetition control every generation is decoded with (the worker's settings): a small model at
    temperature 0 otherwise loops on a line."""

    repetition_penalty: float = 1.0  # mlx-lm's logits processor (1.0: off)
    repetition_context: int = 64  # tokens it looks back over
    frequency_penalty: float = 0.0  # an OpenAI-compatible server's parameter (0: not sent)


NO_REPETITION_CONTROL = Decoding()  # structured output (JSON repeats its keys), and the default


class TextStream:
    """Text pieces of one generation; ``counts`` is final once iteration ends (or ``close()`` is called)."""

    def __init__(self, pieces: Iterator[str], counts: TokenCounts, stop: Sequence[str]) -> None:
        self.counts = counts
        self._pieces = pieces
        self._stop = [s for s in stop if s]
        self._iter = self._cut_at_stop()

    def __iter__(self) -> Iterator[str]:
        return self._iter

    def __next__(self) -> str:
        return next(self._iter)

    def close(self) -> None:
        """Stop generating now (the caller cancelled): the backend frees what it holds."""
        self._iter.close()
        self._pieces.close()  # type: ignore[attr-defined]

    def _cut_at_stop(self) -> Iterator[str]:
        pending = ""
        try:
            for piece in self._pieces:
                pending += piece
                cut = first_stop(pending, self._stop)
                if cut is not None:
                    if cut:
                        yield pending[:cut]
                    self.counts.finish_reason = "stop"
                    return
                # Hold back a tail that may be the start of a stop string, until the next piece decides.
                ready = len(pending) - partial_stop_length(pending, self._stop)
                if ready:
                    yield pending[:ready]
                    pending = pending[ready:]
            if pending:
                yield pending
        finally:
            self._pieces.close()  # type: ignore[attr-defined]


def first_stop(text: str, stop: Sequence[str]) -> int | None:
    """Index of the earliest stop string in ``text``, if any."""
    found = [i for i in (text.find(s) for s in stop) if i >= 0]
    return min(found) if found else None


def partial_stop_length(text: str, stop: Sequence[str]) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of a stop string."""
    best = 0
    for s in stop:
        for size in range(min(len(s) - 1, len(text)), best, -1):
            if text.endswith(s[:size]):
                best = size
                break
    return best


class Backend:
    """What the generation service needs from an LLM runtime.

    ``load()`` prepares the model (idempotent), ``unload()`` frees it, ``loaded`` tells which;
    ``stream()`` generates (loading first if needed); ``count_tokens()`` measures a text.
    """

    name = "base"
    local = False  # runs the model in this process (worth loading at start)
    # Guesses for a worker that has measured nothing yet (tokens/s); each backend refines them.
    prompt_rate_estimate = 300.0
    decode_rate_estimate = 20.0

    def __init__(self, model: str) -> None:
        self.model = model
        self.decoding = NO_REPETITION_CONTROL
        self.blas: str | None = None
        self.tokenizer_path: str | None = None  # the model's tokenizer.json, when the caller can read it

    @property
    def loaded(self) -> bool:
        raise NotImplementedError

    def load(self) -> None:
        raise NotImplementedError

    def unload(self) -> None:
        raise NotImplementedError

    def count_tokens(self, text: str) -> int:
        raise NotImplementedError

    def stream(
        self,
        messages: Sequence[ChatMessage],
        max_tokens: int,
        temperature: float,
        stop: Sequence[str] = (),
        on_prompt: PromptProgress | None = None,
        prompt_step: int | None = None,
        decoding: Decoding | None = None,
    ) -> TextStream:
        """``on_prompt(read, total)`` is called while the prompt is read, ``prompt_step`` tokens at a time
        where the backend reads it in pieces (an exception it raises aborts the generation); ``decoding``:
        this request's repetition control (default: the backend's)."""
        self.load()
        counts = TokenCounts()
        decoding = decoding or self.decoding
        pieces = self._generate(list(messages), max_tokens, temperature, stop, counts, on_prompt, prompt_step, decoding)
        return TextStream(pieces, counts, stop)

    def _generate(
        self,
        messages: list[ChatMessage],
        max_tokens: int,
        temperature: float,
        stop: Sequence[str],
        counts: TokenCounts,
        on_prompt: PromptProgress | None = None,
        prompt_step: int | None = None,
        decoding: Decoding = NO_REPETITION_CONTROL,
    ) -> Iterator[str]:
        """Yield text pieces and keep ``counts`` up to date; ``stop`` is a hint (TextStream enforces it)."""
        raise NotImplementedError
