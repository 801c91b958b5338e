"""What every worker process shares: logging, signal handling, heartbeats, in-process Huey consumers."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import redis
from huey import Huey
from huey.consumer import Consumer

from services.config import Settings
from services.system.processes import clear_heartbeat, publish_heartbeat

log = logging.getLogger(__name__)


def run_in_background(settings: Settings) -> None:
    """Lower this process's processor priority by ``background_nice`` (its children inherit it): when cores
    are scarce (a first index with OCR, the user's own programs), a background worker (NER, the documents'
    extraction, the learner) yields them to the indexer, the web and the model, and it still gets every core
    they leave idle. On two cores with NER alone beside the indexer it changed nothing measurable
    (``bench/background_priority.py``)."""
    if settings.background_nice:
        try:
            os.nice(settings.background_nice)
        except OSError as exc:  # a platform or a sandbox that refuses: run at the usual priority
            log.warning("could not lower this process's priority: %s", exc)


class ThreadedConsumer(Consumer):
    """A Huey consumer that leaves signal handling to the process (several run side by side)."""

    def _set_signal_handlers(self) -> None:
        pass


def stop_process(process: subprocess.Popen[Any], timeout: float, sig: int = signal.SIGTERM) -> int:
    """Ask ``process`` to stop with ``sig``, kill it after ``timeout`` seconds; its exit code."""
    if process.poll() is None:
        process.send_signal(sig)
    return wait_or_kill(process, timeout)


def wait_or_kill(process: subprocess.Popen[Any], timeout: float) -> int:
    """Wait for a process already asked to stop; kill it after ``timeout`` seconds; its exit code."""
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        log.warning("pid %d did not stop in %.0fs: killing it", process.pid, timeout)
        process.kill()
    return process.wait()


def setup_logging(settings: Settings, name: str) -> None:
    logging.basicConfig(
        level=settings.log_level.upper(),
        format=f"%(asctime)s {name}[%(process)d] %(levelname)s %(name)s: %(message)s",
        force=True,  # over any earlier set-up (the CLI's own, a library's): one format for every process
    )
    for handler in logging.getLogger().handlers:
        handler.addFilter(quiet_chatter)
        handler.addFilter(redis_outage)


CHATTY_LOGGERS = ("huey", "uvicorn")


def quiet_chatter(record: logging.LogRecord) -> bool:
    """Huey's and uvicorn's INFO lines (each task executed, each periodic enqueue, the consumer's banner,
    the server's start-up steps) become DEBUG: at INFO the log shows ObsiRAG's state changes, not the
    machinery's heartbeat. ``OBSIRAG_LOG_LEVEL=DEBUG`` shows them."""
    if record.name.startswith(CHATTY_LOGGERS) and record.levelno == logging.INFO:
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger().isEnabledFor(logging.DEBUG)
    return True


class RedisLink:
    """Whether this process reaches Redis. While Redis restarts, every thread's retry fails: the log says
    so once when the link is lost and once when it is back, never once per retry.

    Just after it is back, another thread's pooled connection to the old Redis fails once (« Connection
    closed by server ») before redis-py opens a new one: within ``stale_grace`` seconds that is no new loss."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, stale_grace: float = 2.0) -> None:
        self.down = False
        self._lock = threading.Lock()
        self._clock, self._grace = clock, stale_grace
        self._back_at = float("-inf")

    def lost(self, exc: BaseException) -> None:
        with self._lock:
            if self._clock() - self._back_at < self._grace:
                return
            was_down, self.down = self.down, True
        if not was_down:
            log.warning("Redis injoignable, nouvelle tentative… (%s)", exc)

    def back(self) -> None:
        with self._lock:
            was_down, self.down = self.down, False
            if was_down:
                self._back_at = self._clock()
        if was_down:
            log.info("Redis de retour")


LINK = RedisLink()


def redis_outage(record: logging.LogRecord) -> bool:
    """Huey's consumer loops (each worker thread's dequeue, the scheduler's read every second) log a whole
    traceback per failed try: while Redis is away these become ``LINK``'s one line. Errors raised by a
    task's own code are logged by ``huey`` itself and stay as they are."""
    error = record.exc_info[1] if record.exc_info else None
    if record.name.startswith("huey.consumer") and isinstance(error, redis.ConnectionError):
        LINK.lost(error)
        return False
    return True


def stop_on_signals() -> threading.Event:
    """An event set by SIGTERM or SIGINT: the process's cue to finish its current task and exit."""
    stop = threading.Event()

    def handle(signum: int, _frame: Any) -> None:
        log.info("received %s, stopping", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)
    return stop


def start_consumer(huey: Huey, workers: int, periodic: bool = False) -> ThreadedConsumer:
    # A worker thread that failed to dequeue waits longer after each failure (x1.15): capped at 1 s, it
    # takes the queued tasks again within a second of Redis coming back (Huey's own cap is 10 s).
    consumer = ThreadedConsumer(
        huey, workers=workers, worker_type="thread", periodic=periodic, check_worker_health=True, max_delay=1.0
    )
    consumer.start()
    return consumer


def run_until_stopped(
    settings: Settings,
    name: str,
    stop: threading.Event,
    consumers: list[ThreadedConsumer] = (),  # type: ignore[assignment]
    details: Callable[[], dict[str, Any]] | None = None,
    tick: Callable[[], None] | None = None,
    tick_seconds: float | None = None,
) -> None:
    """Publish heartbeats and run ``tick`` (every ``tick_seconds``, default the heartbeat's period) until
    ``stop`` is set, then stop the consumers gracefully. ``tick`` runs whether Redis answers or not."""
    client = redis.Redis.from_url(settings.effective_redis_url)
    started = time.time()
    every = min(tick_seconds or settings.heartbeat_seconds, settings.heartbeat_seconds)
    next_beat = 0.0
    try:
        while not stop.is_set():
            if time.monotonic() >= next_beat:
                beat(client, name, started, settings.heartbeat_seconds, details)
                next_beat = time.monotonic() + settings.heartbeat_seconds
            if tick is not None:
                tick()
            stop.wait(every)
    finally:
        for consumer in consumers:
            consumer.stop(graceful=True)
        with contextlib.suppress(redis.ConnectionError):
            clear_heartbeat(client, name)


def beat(
    client: redis.Redis, name: str, started: float, interval: float, details: Callable[[], dict[str, Any]] | None
) -> None:
    """One heartbeat; a failure is Redis restarting (the process keeps working and beats again later)."""
    try:
        publish_heartbeat(client, name, started, interval, details() if details else None)
    except redis.ConnectionError as exc:
        LINK.lost(exc)
    else:
        LINK.back()
