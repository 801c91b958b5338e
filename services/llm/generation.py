"""The mlx worker's generation service: runs one request at a time and streams its tokens into Redis.

Between two tokens it checks the caller's cancel flag and, during a learner request, lets waiting
chat requests run first (``preempt``): nested in the same thread, so there is still exactly one
generation step at a time, and the learner resumes afterwards from where it was.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import redis

from services.llm import streams
from services.llm.backends import Backend, TokenCounts
from services.llm.models import GenerationRequest, Priority, StreamEvent, WorkerState

log = logging.getLogger(__name__)


class GenerationService:
    def __init__(self, backend: Backend, client: redis.Redis, idle_unload_seconds: float) -> None:
        self.backend = backend
        self.redis = client
        self.idle_unload_seconds = idle_unload_seconds
        self.instance = uuid.uuid4().hex
        self.stopping = threading.Event()  # set when the process stops: running requests end with an error
        self.preempt: Callable[[], None] | None = None  # runs the chat requests waiting in the queue
        self.queue_depth: Callable[[], int] = lambda: 0
        self.last_tokens_per_s: float | None = None
        self.requests_served = 0
        self._lock = threading.RLock()  # one generation (or load/unload) at a time; preemption re-enters
        self._active: list[str] = []  # request ids, outermost first
        self._idle_since = time.monotonic()

    def run(self, request: GenerationRequest) -> StreamEvent:
        """Generate ``request`` into its stream; never raises: failures become an ``error`` event."""
        with self._lock:
            self._active.append(request.id)
            try:
                event = self._run(request)
            finally:
                self._active.pop()
                self._idle_since = time.monotonic()
        self.requests_served += 1
        level = logging.WARNING if event.kind == "error" else logging.DEBUG  # each request is no state change
        log.log(level, "request %s: %s %s", request.id, event.kind, event.finish_reason or event.error or "")
        return event

    def _run(self, request: GenerationRequest) -> StreamEvent:
        stats = _Timing(request.submitted_at)
        done = {"model": self.backend.model, "backend": self.backend.name, "queued_ms": stats.queued_ms}
        if streams.is_cancelled(self.redis, request.id):  # cancelled while queued: nothing to generate
            return self._finish(request.id, StreamEvent(kind="done", finish_reason="cancelled", **done))
        streams.mark_owner(self.redis, request.id, self.instance)
        try:
            counts, reason = self._stream_tokens(request, stats)
            event = StreamEvent(
                kind="done",
                finish_reason=reason or counts.finish_reason or "stop",
                prompt_tokens=counts.prompt_tokens,
                completion_tokens=counts.completion_tokens,
                ttft_ms=stats.ttft_ms,
                tokens_per_s=stats.tokens_per_s(counts.completion_tokens),
                **done,
            )
            self.last_tokens_per_s = event.tokens_per_s or self.last_tokens_per_s
        except Exception as exc:  # the caller must always get a terminal event
            log.exception("request %s failed", request.id)
            event = StreamEvent(kind="error", error=f"{type(exc).__name__}: {exc}", **done)
        return self._finish(request.id, event)

    def _stream_tokens(self, request: GenerationRequest, stats: _Timing) -> tuple[TokenCounts, str | None]:
        """Publish each piece; between two pieces, honour a cancel and let waiting chats cut in."""
        text = self.backend.stream(request.messages, request.max_tokens, request.temperature, request.stop)
        try:
            for piece in text:
                stats.token()
                if streams.publish(self.redis, request.id, StreamEvent(kind="token", text=piece)):
                    return text.counts, "cancelled"
                if self.stopping.is_set():
                    raise RuntimeError("the generation worker is stopping")
                if request.priority < Priority.CHAT and self.preempt is not None:
                    stats.pause(self.preempt)
            return text.counts, None
        finally:
            text.close()
            stats.end()

    def _finish(self, request_id: str, event: StreamEvent) -> StreamEvent:
        try:
            streams.publish(self.redis, request_id, event)
        except redis.RedisError:  # the caller's watch reports the request lost
            log.exception("could not publish the end of request %s", request_id)
        return event

    def unload_if_idle(self, now: float | None = None) -> bool:
        """Free the model after ``idle_unload_seconds`` without requests (called by the process's tick)."""
        now = time.monotonic() if now is None else now
        if not self.backend.loaded or now - self._idle_since < self.idle_unload_seconds:
            return False
        if not self._lock.acquire(blocking=False):  # a generation is running
            return False
        try:
            if self._active:
                return False
            self.backend.unload()
            return True
        finally:
            self._lock.release()

    def state(self) -> WorkerState:
        active = list(self._active)
        return WorkerState(
            backend=self.backend.name,
            model=self.backend.model,
            loaded=self.backend.loaded,
            busy=bool(active),
            current_request=active[-1] if active else None,
            queue_depth=self.queue_depth(),
            last_tokens_per_s=self.last_tokens_per_s,
            instance=self.instance,
            requests_served=self.requests_served,
        )

    def details(self) -> dict[str, Any]:
        """The heartbeat's details (``pid`` comes with the heartbeat itself)."""
        return self.state().model_dump(exclude={"pid"})


class _Timing:
    """Time to first token and decode rate of one request, minus the time lent to preempting chats."""

    def __init__(self, submitted_at: float | None) -> None:
        self.start = time.perf_counter()
        self.queued_ms = max(0.0, (time.time() - submitted_at) * 1000) if submitted_at else None
        self.first: float | None = None
        self.last = self.start
        self.paused = 0.0

    def token(self) -> None:
        if self.first is None:
            self.first = time.perf_counter()

    def pause(self, run: Callable[[], None]) -> None:
        before = time.perf_counter()
        run()
        self.paused += time.perf_counter() - before

    def end(self) -> None:
        self.last = time.perf_counter()

    @property
    def ttft_ms(self) -> float | None:
        return (self.first - self.start) * 1000 if self.first is not None else None

    def tokens_per_s(self, tokens: int) -> float | None:
        """Decode rate after the first token (the prompt's prefill belongs to the time to first token)."""
        if self.first is None or tokens < 2:
            return None
        elapsed = self.last - self.first - self.paused
        return (tokens - 1) / elapsed if elapsed > 0 else None
