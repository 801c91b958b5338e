"""``obsirag up``: start the private Redis and every worker process, restart crashed ones, stop cleanly."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from filelock import FileLock, Timeout

from services.config import Settings
from services.system.processes import WORKERS
from services.system.supervision import supervisor_lock
from workers.process import run_until_stopped, stop_process, wait_or_kill
from workers.redis_server import redis_command, wait_for_redis

log = logging.getLogger(__name__)

MAX_BACKOFF = 30.0
HEALTHY_AFTER = 60.0  # a child that ran this long gets its restart backoff reset
TICK_SECONDS = 0.25  # how often the supervisor looks for a dead child (Redis first)


@dataclass
class Child:
    name: str
    env: dict[str, str]
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    restarts: int = 0
    backoff: float = 1.0
    restart_at: float | None = None
    history: list[int] = field(default_factory=list)
    failing: bool = False  # it died and has not yet run HEALTHY_AFTER seconds since: a retry loop
    first_backoff: float = 1.0
    command: list[str] = field(default_factory=list)  # default: python -m workers.<name>
    hint: str = ""  # where to read why it died, added to the warning

    def start(self, quiet: bool = False) -> None:
        command = self.command or [sys.executable, "-m", f"workers.{self.name}"]
        # Own session: Ctrl-C reaches the supervisor only, which then stops the workers, then Redis.
        self.process = subprocess.Popen(command, env=self.env, stdin=subprocess.DEVNULL, start_new_session=True)
        self.started_at = time.monotonic()
        self.restart_at = None
        log.log(logging.DEBUG if quiet else logging.INFO, "started %s (pid %d)", self.name, self.process.pid)

    def check(self) -> None:
        """Restart the child, with exponential backoff, when it has died."""
        now = time.monotonic()
        if self.process is None or self.process.poll() is None:
            if self.process is not None and now - self.started_at > HEALTHY_AFTER and self.failing:
                self.backoff, self.failing = self.first_backoff, False
                log.info("%s is running again after %d restarts", self.name, self.restarts)
            return
        if self.restart_at is None:
            code = self.process.returncode
            # A retry loop says so once per state change: the first exit (or a new exit code), not each turn.
            repeated = self.failing and self.history[-1:] == [code]
            self.history.append(code)
            self.failing = True
            self.restart_at = now + self.backoff
            level = logging.DEBUG if repeated else logging.WARNING
            how = f"restarting it (backoff up to {MAX_BACKOFF:.0f}s){self.hint}"
            log.log(level, "%s exited with %s; %s", self.name, code, how)
            self.backoff = min(self.backoff * 2, MAX_BACKOFF)
        elif now >= self.restart_at:
            self.restarts += 1
            self.start(quiet=self.restarts > 1)

    def stop(self, timeout: float = 20.0) -> None:
        if self.process is not None:
            stop_process(self.process, timeout)


def stop_children(children: list[Child], timeout: float = 20.0) -> None:
    """Every worker at once, then Redis. Each finishes its current task; what is queued stays in Redis
    (its append-only file) for the next start, so the order among workers does not matter, and stopping
    them one by one made Ctrl-C take the sum of their exits (~3 s each) instead of the slowest."""
    processes = [child.process for child in children if child.name != "redis" and child.process is not None]
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        wait_or_kill(process, timeout)
    for child in children:
        if child.name == "redis":
            child.stop()


class AlreadyRunning(RuntimeError):
    """Another supervisor holds the data dir."""


def acquire_lock(settings: Settings) -> FileLock:
    """One supervisor per data dir: a second ``obsirag up`` fails instead of fighting over the store."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    lock = supervisor_lock(settings)
    try:
        lock.acquire()
    except Timeout:
        raise AlreadyRunning(
            f"ObsiRAG is already running on {settings.data_dir} (see `obsirag status`; "
            "or set OBSIRAG_DATA_DIR to another folder for a second instance)"
        ) from None
    return lock


def start_redis(settings: Settings, env: dict[str, str]) -> Child:
    """The private redis-server, started and answering, then supervised like the workers: restarted at
    once when it dies (its append-only file keeps the queued tasks), with backoff if it keeps dying."""
    settings.redis_dir.mkdir(parents=True, exist_ok=True)
    settings.redis_socket.unlink(missing_ok=True)
    hint = f" (why: {settings.redis_dir / 'redis.log'})"
    redis = Child("redis", env, command=redis_command(settings), backoff=0.1, first_backoff=0.1, hint=hint)
    redis.start()
    try:
        wait_for_redis(settings.effective_redis_url, 10.0, redis.process)
    except BaseException:
        redis.stop()
        raise
    log.info("private redis-server ready on %s", settings.redis_socket)
    return redis


def child_env(settings: Settings, redis_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        OBSIRAG_VAULT=str(settings.vault),
        OBSIRAG_DATA_DIR=str(settings.data_dir),
        OBSIRAG_REDIS_URL=redis_url,
        PYTHONUNBUFFERED="1",
    )
    if settings.qdrant_path is not None:
        env["OBSIRAG_QDRANT_PATH"] = str(settings.qdrant_path)
    return env


def supervise(
    settings: Settings, stop: threading.Event, workers: tuple[str, ...] = WORKERS, lock: FileLock | None = None
) -> None:
    """Run the whole system until ``stop`` is set (``lock``: the data dir's lock, when the caller took it)."""
    lock = acquire_lock(settings) if lock is None else lock
    private = settings.redis_url is None
    redis_url = settings.effective_redis_url
    settings = settings.model_copy(update={"redis_url": redis_url})
    env = child_env(settings, redis_url)
    children: list[Child] = []  # Redis first: checked first at each tick, stopped last
    try:
        if private:
            children.append(start_redis(settings, env))
        for name in workers:
            children.append(Child(name, env))
            children[-1].start()
        run_until_stopped(
            settings, "supervisor", stop, tick=lambda: [c.check() for c in children], tick_seconds=TICK_SECONDS
        )
    finally:
        stop_children(children)
        lock.release()
        log.info("stopped")
