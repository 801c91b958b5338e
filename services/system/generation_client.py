"""The ``Generator`` of the running system: how the chat engine, the learner and the CLI ask for a generation.

Requests go through the Huey ``generate`` queue to the mlx worker, the only process holding a model;
tokens come back on the request's Redis stream. While the stream is silent the client watches the
worker's heartbeat, so a dead worker ends the caller's stream with an ``error`` event, never a hang.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from functools import cached_property

import redis

from services.config import Settings
from services.llm import streams
from services.llm.client import CancelScope, collect
from services.llm.models import GenerationRequest, GenerationResult, StreamEvent, WorkerState
from services.system.processes import read_process
from services.system.queues import Queues

WORKER_NAME = "mlx_worker"
POLL_MS = 500  # how long one XREAD waits before the client looks at the worker's health
NO_WORKER_GRACE = 20.0  # a queued request waits this long for a (re)starting worker to appear
CALLER_BEAT = 0.3  # seconds between two refreshes of the caller heartbeat (it expires after 1.2 s)
WORKER_STOPPED = "le générateur s'est arrêté pendant la réponse (il redémarre tout seul) : réessaie"
NO_WORKER = "aucun générateur ne tourne : `obsirag up` (ou `make run`) est-il lancé ?"
TIMEOUT = (
    "pas de réponse du modèle en {seconds:.0f} s ({model}, backend {backend}). Pour aller plus vite : un modèle "
    "plus petit (OBSIRAG_LLM_MODEL), un backend plus rapide (OBSIRAG_LLM_BACKEND=openai avec llama.cpp ou Ollama), "
    "ou laisse-lui plus de temps (OBSIRAG_LLM_TIMEOUT_SECONDS)."
)


class GenerationClient:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @cached_property
    def redis(self) -> redis.Redis:
        return redis.Redis.from_url(self.settings.effective_redis_url)

    @cached_property
    def queues(self) -> Queues:
        return Queues(self.settings)

    def submit(self, request: GenerationRequest, watched: bool = False) -> str:
        """Queue ``request`` at its priority; returns its id (the key of its stream).

        ``watched``: the caller reads the stream at once; the worker drops the request if it stops reading.
        """
        if request.submitted_at is None or watched:
            request = request.model_copy(
                update={"submitted_at": request.submitted_at or time.time(), "watched": watched}
            )
        if request.watched:
            streams.caller_alive(self.redis, request.id)
        self.queues.generate(request.model_dump(mode="json"), priority=int(request.priority))
        return request.id

    def stream(
        self, request: GenerationRequest, timeout: float | None = None, scope: CancelScope | None = None
    ) -> Iterator[StreamEvent]:
        """Submit ``request`` (watched) and read its events; ``scope``: the question it belongs to."""

        def start() -> Iterator[StreamEvent]:
            return self.events(self.submit(request, watched=True), timeout)

        if scope is None:
            return start()
        return scope.run(request.id, lambda: self.cancel(request.id), start)

    def text(
        self, request: GenerationRequest, timeout: float | None = None, scope: CancelScope | None = None
    ) -> GenerationResult:
        """Submit and wait for the whole answer; raises ``GenerationError`` on an error event."""
        return collect(self.stream(request, timeout, scope))

    def events(self, request_id: str, timeout: float | None = None) -> Iterator[StreamEvent]:
        """The request's events from the first one; ends after ``done`` or ``error``.

        ``timeout`` (default ``llm_timeout_seconds``) bounds the wait: past it, the stream ends with an
        ``error`` at the first pause of more than ``POLL_MS`` without a token (a steady stream of tokens is
        never cut; progress events do not count). While it reads, it keeps the caller's heartbeat alive:
        a caller that stops reading (killed, or gone) frees the worker within two seconds.
        """
        deadline = time.monotonic() + (timeout if timeout is not None else self.settings.llm_timeout_seconds)
        watch = _WorkerWatch(self.redis, request_id, self.settings.heartbeat_seconds)
        after, beat = "0", 0.0
        while True:
            if time.monotonic() - beat > CALLER_BEAT:
                streams.caller_alive(self.redis, request_id)
                beat = time.monotonic()
            block = max(1, min(POLL_MS, int((deadline - time.monotonic()) * 1000)))
            entries = streams.read(self.redis, request_id, after, block)
            for entry_id, event in entries:
                after = entry_id
                yield event
                if event.terminal:
                    return
            if any(event.kind == "token" for _entry, event in entries):
                continue
            problem = watch.problem()
            if problem is None and time.monotonic() >= deadline:
                problem = self._timeout_message(deadline - watch.started)
            if problem is not None:
                yield from self._give_up(request_id, after, problem)
                return

    def _give_up(self, request_id: str, after: str, problem: str) -> Iterator[StreamEvent]:
        # The terminal event may have landed just before the worker vanished: it wins over our error.
        for _entry, event in streams.read(self.redis, request_id, after, block_ms=None):
            yield event
            if event.terminal:
                return
        self.cancel(request_id)  # a worker that picks it up later skips it
        yield StreamEvent(kind="error", error=problem)

    def _timeout_message(self, seconds: float) -> str:
        state = self.state()
        model = state.model if state else self.settings.llm_model
        backend = state.backend if state else self.settings.llm_backend
        return TIMEOUT.format(seconds=seconds, model=model, backend=backend)

    def cancel(self, request_id: str) -> None:
        """Ask the worker to stop between two tokens; the stream then ends with finish_reason "cancelled"."""
        streams.request_cancel(self.redis, request_id)

    def state(self) -> WorkerState | None:
        """What the running worker last published, or None when no worker is alive."""
        return worker_state(self.redis)


def worker_state(client: redis.Redis) -> WorkerState | None:
    beat = read_process(client, WORKER_NAME)
    if beat is None or "backend" not in beat.details:
        return None
    return WorkerState(**{**beat.details, "pid": beat.pid})


class _WorkerWatch:
    """Tells whether a silent stream means trouble: the worker that took the request died or none runs.

    A missing heartbeat counts only after ``dead_after`` seconds (a busy worker can miss one beat);
    a heartbeat from another worker instance than the request's owner means a restart: lost at once.
    """

    def __init__(self, client: redis.Redis, request_id: str, heartbeat_seconds: float) -> None:
        self.redis = client
        self.request_id = request_id
        self.dead_after = max(3.0, 3 * heartbeat_seconds)
        self.started = self.last_seen = time.monotonic()

    def problem(self) -> str | None:
        state = worker_state(self.redis)
        owner = streams.owner(self.redis, self.request_id)
        now = time.monotonic()
        if state is not None:
            self.last_seen = now
        silent = now - self.last_seen
        if owner is not None and ((state is not None and state.instance != owner) or silent > self.dead_after):
            return WORKER_STOPPED
        if owner is None and silent > NO_WORKER_GRACE:
            return NO_WORKER
        return None
