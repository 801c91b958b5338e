"""``obsirag up``: start the private Redis and every worker process, restart crashed ones, stop cleanly."""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

import redis
from filelock import FileLock, Timeout

from services.config import Settings
from services.lifeline import PARENT_ENV, die_with_parent
from services.system.instance import (
    Instance,
    RecordedProcess,
    forget_instance,
    read_instance,
    stop_processes,
    write_instance,
)
from services.system.processes import WORKERS, clear_heartbeat
from services.system.queues import Queues
from services.system.supervision import LOCK_NAME, supervisor_lock
from workers.cli_text import tr
from workers.process import run_until_stopped, stop_process, wait_or_kill
from workers.redis_server import asking_once, compact_append_only_file, redis_command, wait_for_redis

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
        # Own session: Ctrl-C reaches the supervisor only, which then stops the workers, then Redis. A
        # SIGTERM from the kernel when the supervisor dies, even by kill -9 (Redis writes its file first).
        self.process = subprocess.Popen(
            command, env=self.env, stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=die_with_parent()
        )
        self.started_at = time.monotonic()
        self.restart_at = None
        log.log(logging.DEBUG if quiet else logging.INFO, "started %s (pid %d)", self.name, self.process.pid)

    def record(self) -> RecordedProcess | None:
        """This child as ``instance.json`` keeps it (None before its first start)."""
        if self.process is None:
            return None
        code = self.process.returncode
        found = RecordedProcess.of(self.name, self.process.pid) if code is None else None
        if found is not None:
            return found
        return RecordedProcess(name=self.name, pid=self.process.pid, started=0, command=[], alive=False, exit_code=code)

    def check(self) -> bool:
        """Restart the child, with exponential backoff, when it has died; whether it died or started now."""
        now = time.monotonic()
        if self.process is None or self.process.poll() is None:
            if self.process is not None and now - self.started_at > HEALTHY_AFTER and self.failing:
                self.backoff, self.failing = self.first_backoff, False
                log.info("%s is running again after %d restarts", self.name, self.restarts)
            return False
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
            return True
        if now >= self.restart_at:
            self.restarts += 1
            self.start(quiet=self.restarts > 1)
            return True
        return False

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
    """Another supervisor holds the data dir, or a Redis of another start answers on its socket."""


def acquire_lock(settings: Settings) -> FileLock:
    """One supervisor per data dir: a second ``obsirag up`` fails instead of fighting over the store."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    lock = supervisor_lock(settings)
    try:
        lock.acquire()
    except Timeout:
        raise AlreadyRunning(already_running(settings)) from None
    return lock


def already_running(settings: Settings) -> str:
    """The one line refusing a second start: which pid runs, and how to stop it."""
    instance = read_instance(settings.data_dir)
    pid = str(instance.supervisor.pid) if instance is not None else _lock_holder(settings)
    down = f"`obsirag down --vault {settings.vault}`"
    return tr(
        f"ObsiRAG tourne déjà sur {settings.data_dir} (superviseur pid {pid}) : arrête-le avec {down} ou "
        f"`kill {pid}`, ou donne un autre --data pour une seconde instance.",
        f"ObsiRAG already runs on {settings.data_dir} (supervisor pid {pid}): stop it with {down} or `kill {pid}`, "
        "or give another --data for a second instance.",
    )


def _lock_holder(settings: Settings) -> str:
    try:
        return (settings.data_dir / LOCK_NAME).read_text(encoding="utf-8").strip() or "?"
    except OSError:
        return "?"


def stop_leftovers(settings: Settings) -> list[RecordedProcess]:
    """The children a dead supervisor left running (checked against their start time and command line),
    stopped; under the lock, so no live supervisor owns them. What was stopped."""
    previous = read_instance(settings.data_dir)
    if previous is None:
        return []
    left = [(child, process) for child in previous.children if (process := child.running()) is not None]
    stop_processes([process for _child, process in left])
    forget_instance(settings.data_dir)
    return [child for child, _process in left]


def refuse_live_redis(settings: Settings) -> None:
    """Never two Redis on one socket (the second takes the file over, and the first deletes it as it stops)."""
    client = redis.Redis(unix_socket_path=str(settings.redis_socket), socket_timeout=1, retry=asking_once())
    try:
        pid = client.info("server")["process_id"]
    except (redis.RedisError, OSError):
        return  # nothing answers: the file, if any, is a dead Redis's
    finally:
        client.close()
    raise AlreadyRunning(
        tr(
            f"Un Redis (pid {pid}) répond déjà sur {settings.redis_socket}, lancé hors de ce superviseur : "
            f"arrête-le (`kill {pid}`) puis relance `obsirag up`.",
            f"A Redis (pid {pid}) already answers on {settings.redis_socket}, started outside this supervisor: "
            f"stop it (`kill {pid}`), then run `obsirag up` again.",
        )
    )


def start_redis(settings: Settings, env: dict[str, str]) -> Child:
    """The private redis-server, started and answering, then supervised like the workers: restarted at
    once when it dies (its append-only file keeps the queued tasks), with backoff if it keeps dying."""
    settings.redis_dir.mkdir(parents=True, exist_ok=True)
    refuse_live_redis(settings)
    settings.redis_socket.unlink(missing_ok=True)
    hint = f" (why: {settings.redis_dir / 'redis.log'})"
    redis_child = Child("redis", env, command=redis_command(settings), backoff=0.1, first_backoff=0.1, hint=hint)
    redis_child.start()
    try:
        wait_for_redis(settings.effective_redis_url, 10.0, redis_child.process)
    except BaseException:
        redis_child.stop()
        raise
    log.info("private redis-server ready on %s", settings.redis_socket)
    return redis_child


def tidy_redis(settings: Settings, private: bool) -> None:
    """Before any worker starts: drop the task results an earlier version kept that nobody reads; in the
    private Redis, forget the last run's heartbeats (a web stopped mid-beat left one for a few seconds, which
    a status read as this run's), then have it rewrite its append-only file if it grew large."""
    url = settings.effective_redis_url
    # One try, short waits: a server Redis away must not hold the workers' start (they say it themselves).
    with redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=5, retry=asking_once()) as client:
        with contextlib.suppress(redis.RedisError, OSError):
            if dropped := Queues(settings).drop_unread_results(client):
                log.info("dropped %d task results nobody reads", dropped)
        if private:
            for name in WORKERS:
                clear_heartbeat(client, name)
            compact_append_only_file(client)


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
    env[PARENT_ENV] = str(os.getpid())  # each worker watches this pid (services.lifeline.watch_parent)
    return env


class Record:
    """``instance.json`` and the heartbeats kept true at each change of a child: a dead one is shown dead
    at the next tick (a quarter second), not when its heartbeat expires (3 beats)."""

    def __init__(self, settings: Settings, children: list[Child]) -> None:
        self.settings, self.children = settings, children
        self.supervisor = RecordedProcess.of("supervisor", os.getpid())
        self.redis = redis.Redis.from_url(settings.effective_redis_url, socket_timeout=0.5)

    def write(self) -> None:
        if self.supervisor is None:
            return
        children = [record for child in self.children if (record := child.record()) is not None]
        s = self.settings
        write_instance(Instance(vault=s.vault, data_dir=s.data_dir, supervisor=self.supervisor, children=children))

    def tick(self) -> None:
        changed = [child for child in self.children if child.check()]
        for child in changed:
            if child.name != "redis" and child.process is not None and child.process.returncode is not None:
                with contextlib.suppress(redis.RedisError, OSError):  # Redis restarting: nothing to clear
                    clear_heartbeat(self.redis, child.name)
        if changed:
            self.write()


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
    record = Record(settings, children)
    try:
        if private:
            children.append(start_redis(settings, env))
            record.write()
        tidy_redis(settings, private)
        for name in workers:
            children.append(Child(name, env))
            children[-1].start()
            record.write()
        run_until_stopped(settings, "supervisor", stop, tick=record.tick, tick_seconds=TICK_SECONDS)
    finally:
        stop_children(children)
        forget_instance(settings.data_dir)
        lock.release()
        log.info("stopped")
