"""Chat questions in flight in this web process: created by the composer's POST, streamed by the SSE GET.

``ChatEngine.ask`` is a blocking generator (search through the indexer, tokens from the mlx worker's
Redis stream), so each run iterates the process's one engine in a thread and hands the events to the event
loop. Stopping a run (the stop button, or the browser going away) stops its ``CancelScope``: its generations
are cancelled in the worker, which ends the stream with ``finish_reason="cancelled"``: the partial answer is
still saved in the thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from services.chat.engine import ChatEngine, ChatEvent
from services.chat.prompts import QUESTION_FAILED
from services.llm.client import CancelScope
from services.research.engine import ResearchEngine
from services.system import SystemNotRunning

log = logging.getLogger(__name__)

UNCLAIMED_TTL = 600.0  # a question whose stream never connected is forgotten after this long


@dataclass
class ChatRun:
    id: str
    question: str
    thread_id: str
    use_web: bool
    write: bool | None = None  # the composer's « rédiger avec le modèle » (None: as the model can)
    research: bool = False  # the composer's « mode recherche »: sub-questions searched in steps
    scope: CancelScope = field(default_factory=CancelScope)  # the run's generations
    reading: bool = False  # the model is reading the prompt (progress shown, no token yet)
    created: float = field(default_factory=time.monotonic)

    @property
    def stopped(self) -> bool:
        return self.scope.stopped

    @property
    def model_ttft_ms(self) -> float | None:
        """The model's own time to first token (from the worker)."""
        return self.scope.model_ttft_ms


class ChatRuns:
    """The registry of runs, keyed by an unguessable id."""

    def __init__(
        self,
        engine: ChatEngine,
        ensure_running: Callable[[], None],
        record_failure: Callable[[ChatRun, str], None] | None = None,
    ) -> None:
        self.engine = engine
        self.research = ResearchEngine(engine)
        self.ensure_running = ensure_running  # raises SystemNotRunning, with why, before each question
        self.record_failure = record_failure  # keeps a question that failed in its thread, with its error
        self._waiting: dict[str, ChatRun] = {}
        self._active: dict[str, ChatRun] = {}
        self._lock = threading.Lock()

    def create(
        self, question: str, thread_id: str, use_web: bool, write: bool | None = None, research: bool = False
    ) -> ChatRun:
        run = ChatRun(uuid.uuid4().hex, question, thread_id, use_web, write, research=research)
        with self._lock:
            now = time.monotonic()
            self._waiting = {k: r for k, r in self._waiting.items() if now - r.created < UNCLAIMED_TTL}
            self._waiting[run.id] = run
        return run

    def claim(self, run_id: str) -> ChatRun | None:
        """The run for its (single) stream; None if unknown or already streamed."""
        with self._lock:
            run = self._waiting.pop(run_id, None)
            if run is not None:
                self._active[run.id] = run
            return run

    def stop(self, run_id: str) -> bool:
        with self._lock:
            run = self._active.get(run_id) or self._waiting.pop(run_id, None)
        if run is None:
            return False
        run.scope.stop()
        return True

    async def events(self, run: ChatRun) -> AsyncIterator[ChatEvent]:
        """The run's events as they come; stopping the iteration early stops the generation."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[ChatEvent | None] = asyncio.Queue()

        def put(event: ChatEvent | None) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed: the server is shutting down
                loop.call_soon_threadsafe(queue.put_nowait, event)

        worker = threading.Thread(target=self._produce, args=(run, put), name=f"chat-{run.id[:8]}", daemon=True)
        worker.start()
        try:
            while (event := await queue.get()) is not None:
                yield event
        finally:
            if worker.is_alive():
                self.stop(run.id)
            with self._lock:
                self._active.pop(run.id, None)

    def _produce(self, run: ChatRun, put: Callable[[ChatEvent | None], None]) -> None:
        try:
            self.ensure_running()
            ask = {"thread_id": run.thread_id, "scope": run.scope, "write": run.write}
            if run.research:
                events = self.research.ask(run.question, **ask)
            else:
                events = self.engine.ask(run.question, use_web=run.use_web, **ask)
            for event in events:
                put(event)
        except Exception as exc:  # shown in the page instead of a silent, never-ending stream
            if isinstance(exc, SystemNotRunning):  # a state of the system (stopped, Redis restarting), not a bug
                log.info("chat run %s: %s", run.id, exc)
            else:
                log.exception("chat run %s failed", run.id)
            message = failure_message(exc)
            if self.record_failure is not None:
                with contextlib.suppress(Exception):  # the catalog itself may be what failed
                    self.record_failure(run, message)
            put(ChatEvent(kind="error", text=message))
        finally:
            put(None)


def failure_message(exc: Exception) -> str:
    """What the UI says of a question that failed: in French, with the next step; the details are in the log."""
    if isinstance(exc, SystemNotRunning):  # its message is the next step already
        return str(exc)
    timed_out = isinstance(exc, TimeoutError)  # a search the indexer did not answer in time
    detail = "délai dépassé" if timed_out else "erreur interne"  # its class and traceback are in the web log
    return QUESTION_FAILED.format(detail=detail)
