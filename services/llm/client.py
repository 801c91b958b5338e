"""The one way every caller asks for a generation: a ``Generator``.

The chat engine, the grounding check, the learner and memory all hold a ``Generator``: the generation
client of the running system (``services.system.generation_client``), the learner's pacing decorator over
it, or a ``StreamGenerator`` over a plain stream function (tests, benches, a backend in this process).
``collect`` is the one loop that turns a stream of events into a ``GenerationResult``; a ``CancelScope``
holds the generations of one question, so that stopping the question stops them all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from services.llm.backend import Backend
from services.llm.models import GenerationError, GenerationRequest, GenerationResult, StreamEvent, WorkerState

_RESULT_FIELDS = {"finish_reason", "prompt_tokens", "completion_tokens", "ttft_ms", "tokens_per_s", "model", "backend"}


class Generator(Protocol):
    """What every caller of the model holds."""

    def stream(
        self, request: GenerationRequest, timeout: float | None = None, scope: CancelScope | None = None
    ) -> Iterator[StreamEvent]:
        """The request's events, progress included; ends after ``done`` or ``error``. ``timeout``: the
        longest silence waited for (None: the generator's default)."""
        ...

    def text(
        self, request: GenerationRequest, timeout: float | None = None, scope: CancelScope | None = None
    ) -> GenerationResult:
        """The whole answer; raises ``GenerationError`` on an error event or a stream without its end."""
        ...

    def state(self) -> WorkerState | None:
        """What the generation worker publishes (its prompt budget, answer cap), or None."""
        ...


def collect(events: Iterable[StreamEvent]) -> GenerationResult:
    """The text and stats of a stream of events; raises ``GenerationError`` on its error event, or when
    it ends without a terminal event."""
    pieces: list[str] = []
    for event in events:
        if event.kind == "token":
            pieces.append(event.text)
        elif event.kind == "error":
            raise GenerationError(event.error or "generation failed")
        elif event.kind == "done":
            return GenerationResult(text="".join(pieces), **event.model_dump(include=_RESULT_FIELDS))
    raise GenerationError("the stream ended without a terminal event")


class CancelScope:
    """The generations started for one question (the web's stop button stops them all).

    Once stopped it lets nothing more be submitted and cancels the requests in flight, which the worker
    stops within its next token. It keeps the model's own time to first token of the last generation.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stopped = False
        self._in_flight: dict[str, Callable[[], None]] = {}  # request id → how to cancel it
        self.model_ttft_ms: float | None = None

    @property
    def stopped(self) -> bool:
        return self._stopped

    @property
    def in_flight(self) -> list[str]:
        with self._lock:
            return list(self._in_flight)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            cancels = list(self._in_flight.values())
        for cancel in cancels:
            cancel()

    def run(
        self, request_id: str, cancel: Callable[[], None], start: Callable[[], Iterator[StreamEvent]]
    ) -> Iterator[StreamEvent]:
        """``start()``'s events, the request counted in flight meanwhile; once stopped, ``start`` is never
        called and the stream is one ``done`` event with ``finish_reason="cancelled"``."""
        with self._lock:
            # Recorded before the submit: a stop between the two cancels a request the worker then skips.
            admitted = not self._stopped
            if admitted:
                self._in_flight[request_id] = cancel
        if not admitted:
            yield StreamEvent(kind="done", finish_reason="cancelled")
            return
        try:
            for event in start():
                if event.terminal and event.ttft_ms is not None:
                    self.model_ttft_ms = event.ttft_ms
                yield event
        finally:
            with self._lock:
                self._in_flight.pop(request_id, None)


class StreamGenerator:
    """A plain stream function as a ``Generator`` (tests, benches, a backend in this process).

    The function has its own timeout; a stopped scope ends its stream at the next event."""

    def __init__(
        self,
        stream_fn: Callable[[GenerationRequest], Iterator[StreamEvent]],
        state_fn: Callable[[], WorkerState | None] | None = None,
    ) -> None:
        self.stream_fn = stream_fn
        self.state_fn = state_fn

    def stream(
        self, request: GenerationRequest, timeout: float | None = None, scope: CancelScope | None = None
    ) -> Iterator[StreamEvent]:
        if scope is None:
            return self.stream_fn(request)
        return scope.run(request.id, lambda: None, lambda: _until_stopped(self.stream_fn(request), scope))

    def text(
        self, request: GenerationRequest, timeout: float | None = None, scope: CancelScope | None = None
    ) -> GenerationResult:
        return collect(self.stream(request, timeout, scope))

    def state(self) -> WorkerState | None:
        return self.state_fn() if self.state_fn is not None else None


def _until_stopped(events: Iterator[StreamEvent], scope: CancelScope) -> Iterator[StreamEvent]:
    """``events`` until the scope stops: then a cancelled ``done``, as the worker ends a cancelled request."""
    try:
        for event in events:
            if scope.stopped and not event.terminal:
                yield StreamEvent(kind="done", finish_reason="cancelled")
                return
            yield event
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()


def backend_events(backend: Backend) -> Callable[[GenerationRequest], Iterator[StreamEvent]]:
    """A stream function straight over a backend in this process: its pieces as tokens, then ``done`` with
    its counts, or ``error`` when it fails (as the generation worker reports it)."""

    def stream(request: GenerationRequest) -> Iterator[StreamEvent]:
        try:
            pieces = backend.stream(request.messages, request.max_tokens, request.temperature, request.stop)
            for piece in pieces:
                yield StreamEvent(kind="token", text=piece)
        except Exception as exc:  # the runtime's and the server's errors alike: the caller's GenerationError
            yield StreamEvent(kind="error", error=str(exc) or type(exc).__name__)
            return
        counts = pieces.counts
        yield StreamEvent(
            kind="done",
            finish_reason=counts.finish_reason or "stop",
            prompt_tokens=counts.prompt_tokens,
            cached_tokens=counts.cached_tokens,
            completion_tokens=counts.completion_tokens,
            model=backend.model,
            backend=backend.name,
        )

    return stream
