"""The mlx worker's generation service: runs one request at a time and streams its tokens into Redis.

The prompt is read in pieces of about ``STEP_SECONDS`` each, with a ``progress`` event after each piece.
Between two pieces, as between two tokens, it checks the caller's cancel flag and heartbeat and, during
a learner request, lets waiting chat requests run first (``chats``): nested in the same thread, so
there is still exactly one generation step at a time, and the learner resumes afterwards from where it
was. It measures how fast it reads prompts and publishes the prompt budget that this rate allows within
the target time to first token, for every caller to pack its context with.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import redis

from services.llm import streams
from services.llm.backend import NO_REPETITION_CONTROL, Backend, TokenCounts
from services.llm.capability import remembered_or_checked
from services.llm.degeneration import DegenerationWatch
from services.llm.models import Capability, ChatMessage, GenerationRequest, Priority, StreamEvent, WorkerState
from services.llm.redact import redact_secrets

log = logging.getLogger(__name__)
STEP_SECONDS = 0.5  # prompt reading between two checks for a cancel
MIN_STEP, MAX_STEP = 32, 2048  # prompt tokens per piece (mlx-lm's own default is 2048)
MIN_MEASURED_PROMPT = 48  # shorter prompts say more about fixed costs than about the reading rate
MIN_ANSWER_TOKENS = 64
MIN_PROMPT_TOKENS = 384
DECODE_MARGIN = 0.65  # decoding slows as the answer grows and the machine is shared (measured: -35 %)
READ_MARGIN = 0.85  # a long prompt reads slower than the short ones a rate may come from (attention grows)
# A start-up rate flatters: its prompt is short, and the first questions share the CPU with the first
# indexing (measured: the first question after start read ~35 % slower than the warm-up predicted).
WARM_UP_DISCOUNT = 0.75
# ~150 tokens of French for the warm-up reading (long enough for a rate, short enough to cost ~3 s on a CPU).
WARM_UP_TEXT = (
    "Tu es ObsiRAG, l'assistant personnel qui connaît le coffre Obsidian de l'utilisateur. Réponds en français, "
    "de façon concise, uniquement à partir des extraits fournis, et cite chaque affirmation avec le numéro de son "
    "extrait entre crochets. Si les extraits ne suffisent pas, dis-le au lieu d'inventer. "
) * 2


class WaitingChats(Protocol):
    """The queue's view the service needs: its depth, and running the chats waiting in it."""

    def depth(self) -> int: ...

    def run(self) -> None: ...


class Abandoned(Exception):
    """The caller cancelled, gave up or died: stop generating."""


@dataclass(frozen=True)
class Limits:
    """What the worker's settings allow a request (published for callers, who never read their own env)."""

    context_tokens: int = 4096
    max_tokens: int = 512
    target_ttft_seconds: float = 10.0
    target_answer_seconds: float = 60.0

    def prompt_budget(self, prompt_rate: float, decode_rate: float) -> int:
        """Prompt tokens read within the target time to first token, leaving room for the answer."""
        room = self.context_tokens - self.answer_tokens(decode_rate)
        # A floor: below it the system prompt and the question leave no excerpt worth answering from.
        within_target = int(self.target_ttft_seconds * prompt_rate * READ_MARGIN)
        return max(0, min(room, max(MIN_PROMPT_TOKENS, within_target)))

    def answer_tokens(self, decode_rate: float) -> int:
        """Answer tokens decoded within the time left once the first token came (at most ``max_tokens``)."""
        room = (self.target_answer_seconds - self.target_ttft_seconds) * decode_rate * DECODE_MARGIN
        return max(min(MIN_ANSWER_TOKENS, self.max_tokens), min(self.max_tokens, int(room)))


class GenerationService:
    def __init__(
        self,
        backend: Backend,
        client: redis.Redis,
        idle_unload_seconds: float,
        limits: Limits | None = None,
        *,
        chats: WaitingChats | None = None,
        stopping: threading.Event | None = None,
        capability: Capability | None = None,
    ) -> None:
        """``chats``: the chat requests waiting in the queue, run between two tokens of a learner request;
        ``stopping``: set when the process stops (running requests then end with an error); ``capability``:
        whether the model writes, as the settings state it (None, or not known: ``check_capability`` settles it)."""
        self.backend = backend
        self.capability = capability or Capability(can_write=None, reason="checking")
        self.redis = client
        self.idle_unload_seconds = idle_unload_seconds
        self.limits = limits or Limits()
        self.prompt_rate: float | None = None  # measured prompt tokens/s (None: the backend's estimate holds)
        self.instance = uuid.uuid4().hex
        self.stopping = stopping or threading.Event()
        self.chats = chats
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
                cached_tokens=counts.cached_tokens,
                completion_tokens=counts.completion_tokens,
                ttft_ms=stats.ttft_ms,
                tokens_per_s=stats.tokens_per_s(counts.completion_tokens),
                **done,
            )
            self.last_tokens_per_s = event.tokens_per_s or self.last_tokens_per_s
            if (rate := stats.measured_prompt_rate(counts.prompt_tokens)) is not None:
                self.prompt_rate = rate
        except Exception as exc:  # the caller must always get a terminal event
            log.exception("request %s failed", request.id)
            event = StreamEvent(kind="error", error=f"{type(exc).__name__}: {exc}", **done)
        return self._finish(request.id, event)

    def _stream_tokens(self, request: GenerationRequest, stats: _Timing) -> tuple[TokenCounts, str | None]:
        """Publish progress, then each piece; between two, honour a cancel and let waiting chats cut in."""

        def on_prompt(read: int, total: int) -> None:
            stats.prompt_progress(read, total)
            if read < total:  # the last call comes with the first token
                self._checkpoint(request, stats, StreamEvent(kind="progress", prompt_done=read, prompt_tokens=total))

        # Whatever asked (chat, learner, memory, MCP), no model reads a key, a password or a card number.
        messages = [m.model_copy(update={"content": redact_secrets(m.content)}) for m in request.messages]
        decoding = NO_REPETITION_CONTROL if request.structured else None
        text = self.backend.stream(
            messages, request.max_tokens, request.temperature, request.stop, on_prompt, self.prompt_step(), decoding
        )
        watch = (
            None
            if request.structured
            else DegenerationWatch(" ".join(m.content for m in messages if m.role == "system"))
        )
        try:
            for piece in text:
                stats.token()
                self._checkpoint(request, stats, StreamEvent(kind="token", text=piece))
                if watch and (stopped := watch.feed(piece)):  # a loop, or an echo of the instructions: no more
                    return text.counts, stopped
            return text.counts, None
        except Abandoned:
            return text.counts, "cancelled"
        finally:
            text.close()
            stats.end()

    def _checkpoint(self, request: GenerationRequest, stats: _Timing, event: StreamEvent) -> None:
        """Publish ``event``; raise ``Abandoned`` if the caller is gone; let waiting chats cut in."""
        if streams.publish(self.redis, request.id, event, watched=request.watched):
            raise Abandoned()
        if self.stopping.is_set():
            raise RuntimeError("the generation worker is stopping")
        if request.priority < Priority.CHAT and self.chats is not None:
            stats.pause(self.chats.run)

    def prompt_step(self) -> int:
        """Prompt tokens per piece: about ``STEP_SECONDS`` of reading at the current rate."""
        return max(MIN_STEP, min(MAX_STEP, int(self.prompt_rates()[0] * STEP_SECONDS)))

    def prompt_rates(self) -> tuple[float, float]:
        """(prompt, decode) tokens/s: measured, else the backend's estimates."""
        return (
            self.prompt_rate or self.backend.prompt_rate_estimate,
            self.last_tokens_per_s or self.backend.decode_rate_estimate,
        )

    def _finish(self, request_id: str, event: StreamEvent) -> StreamEvent:
        try:
            streams.publish(self.redis, request_id, event)
        except redis.RedisError:  # the caller's watch reports the request lost
            log.exception("could not publish the end of request %s", request_id)
        return event

    def swap_backend(self, backend: Backend, capability: Capability, wait: bool = True) -> bool:
        """Serve with ``backend`` from the next request on; the running one finishes first (the same lock),
        or, without ``wait``, nothing changes while one runs (False)."""
        if not self._lock.acquire(blocking=wait):
            return False
        try:
            self.backend.unload()
            self.backend, self.capability = backend, capability
            self.prompt_rate = self.last_tokens_per_s = None  # the new model's rates are measured anew
        finally:
            self._lock.release()
        return True

    def warm_up(self) -> None:
        """Load the model and read a short prompt once, before the first request: the first question
        then waits for neither, and its budget comes from a measured rate instead of the estimate."""
        if not self.backend.local:
            return  # a server loads its own model; its rate is measured on the first request
        with self._lock:
            if self._active or self.stopping.is_set():
                return
            stats = _Timing(None)
            messages = [ChatMessage(role="system", content=WARM_UP_TEXT), ChatMessage(role="user", content="?")]
            text = self.backend.stream(messages, 1, 0.0, on_prompt=stats.prompt_progress)
            try:
                for _piece in text:
                    pass
            finally:
                text.close()
            if stats.prompt_rate is not None and self.prompt_rate is None:
                self.prompt_rate = stats.prompt_rate * WARM_UP_DISCOUNT
            self._idle_since = time.monotonic()
        log.info("model ready, reads prompts at %.0f tokens/s", self.prompt_rates()[0])

    def check_capability(self) -> None:
        """Settle whether the model writes the chat's answers (``services.llm.capability``), one generation
        at a time with the others: from Redis when known, else by the model's answers to three probes."""
        if self.capability.can_write is not None or self.stopping.is_set():
            return
        with self._lock:
            self.capability = remembered_or_checked(self.backend, self.redis)
        log.info("model writes answers: %s (%s)", self.capability.can_write, self.capability.reason)

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
        prompt_rate, decode_rate = self.prompt_rates()
        prompt_rate = round(prompt_rate, 2)  # the budget follows from the published figure
        return WorkerState(
            backend=self.backend.name,
            model=self.backend.model,
            loaded=self.backend.loaded,
            busy=bool(active),
            current_request=active[-1] if active else None,
            queue_depth=self.chats.depth() if self.chats is not None else 0,
            last_tokens_per_s=self.last_tokens_per_s,
            instance=self.instance,
            requests_served=self.requests_served,
            blas=self.backend.blas,
            prompt_tokens_per_s=prompt_rate,
            prompt_rate_measured=self.prompt_rate is not None,
            prompt_budget=self.limits.prompt_budget(prompt_rate, decode_rate),
            answer_tokens=self.limits.answer_tokens(decode_rate),
            context_tokens=self.limits.context_tokens,
            tokenizer_path=self.backend.tokenizer_path,
            capability=self.capability,
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
        self.prompt_rate: float | None = None  # prompt tokens/s of this request, once read
        self._prompt_start: tuple[float, float] | None = None  # (clock, paused) when reading began

    def prompt_progress(self, read: int, total: int) -> None:
        now = time.perf_counter()
        if read == 0:
            self._prompt_start = (now, self.paused)
        elif read >= total and self._prompt_start is not None and total >= MIN_MEASURED_PROMPT:
            began, paused_before = self._prompt_start
            elapsed = now - began - (self.paused - paused_before)
            self.prompt_rate = total / elapsed if elapsed > 0 else None

    def token(self) -> None:
        if self.first is None:
            self.first = time.perf_counter()

    def measured_prompt_rate(self, prompt_tokens: int) -> float | None:
        """This request's reading rate; from the time to first token when the backend reports no progress."""
        if (
            self.prompt_rate is None
            and self._prompt_start is None
            and self.ttft_ms
            and prompt_tokens >= MIN_MEASURED_PROMPT
        ):
            return prompt_tokens / (self.ttft_ms / 1000)
        return self.prompt_rate

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
