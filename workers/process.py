"""What every worker process shares: logging, signal handling, heartbeats, in-process Huey consumers."""

from __future__ import annotations

import contextlib
import logging
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


class ThreadedConsumer(Consumer):
    """A Huey consumer that leaves signal handling to the process (several run side by side)."""

    def _set_signal_handlers(self) -> None:
        pass


def stop_process(process: subprocess.Popen[Any], timeout: float, sig: int = signal.SIGTERM) -> int:
    """Ask ``process`` to stop with ``sig``, kill it after ``timeout`` seconds; its exit code."""
    if process.poll() is None:
        process.send_signal(sig)
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


CHATTY_LOGGERS = ("huey", "uvicorn")


def quiet_chatter(record: logging.LogRecord) -> bool:
    """Huey's and uvicorn's INFO lines (each task executed, each periodic enqueue, the consumer's banner,
    the server's start-up steps) become DEBUG: at INFO the log shows ObsiRAG's state changes, not the
    machinery's heartbeat. ``OBSIRAG_LOG_LEVEL=DEBUG`` shows them."""
    if record.name.startswith(CHATTY_LOGGERS) and record.levelno == logging.INFO:
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger().isEnabledFor(logging.DEBUG)
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


def start_consumer(huey: Huey, workers: int) -> ThreadedConsumer:
    consumer = ThreadedConsumer(huey, workers=workers, worker_type="thread", periodic=False, check_worker_health=True)
    consumer.start()
    return consumer


def run_until_stopped(
    settings: Settings,
    name: str,
    stop: threading.Event,
    consumers: list[ThreadedConsumer] = (),  # type: ignore[assignment]
    details: Callable[[], dict[str, Any]] | None = None,
    tick: Callable[[], None] | None = None,
) -> None:
    """Publish heartbeats (and run ``tick``) until ``stop`` is set, then stop the consumers gracefully."""
    client = redis.Redis.from_url(settings.effective_redis_url)
    started = time.time()
    try:
        while not stop.is_set():
            try:
                publish_heartbeat(client, name, started, settings.heartbeat_seconds, details() if details else None)
                if tick is not None:
                    tick()
            except redis.ConnectionError as exc:  # Redis restarting: keep working, beat again later
                log.warning("heartbeat failed: %s", exc)
            stop.wait(settings.heartbeat_seconds)
    finally:
        for consumer in consumers:
            consumer.stop(graceful=True)
        with contextlib.suppress(redis.ConnectionError):
            clear_heartbeat(client, name)
