"""What the private Redis's append-only file costs an enqueue.

The private Redis keeps its queues in ``<data>/redis/appendonly.aof`` so that a restart of Redis or of the
whole system loses no queued task. Three private redis-servers, started as the supervisor starts them
(``workers.redis_server.redis_command``) but for ``--appendonly`` / ``--appendfsync``: no file, ``everysec``
(ObsiRAG's choice) and ``always``; the same Huey task (a ``sync_batch`` of 16 note paths, the watcher's)
is enqueued in turns on each, and each enqueue is timed from the call to Redis's reply.

    .venv/bin/python bench/redis_aof.py                  # 2,000 enqueues on each
    .venv/bin/python bench/redis_aof.py --enqueues 500
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

from _common import machine, percentiles, print_table, write_results

from services.config import Settings
from services.system.queues import Queues
from workers.redis_server import redis_command, wait_for_redis

MODES = {"no file": ("no", "everysec"), "everysec": ("yes", "everysec"), "always": ("yes", "always")}


def start(mode: str, root: Path) -> tuple[subprocess.Popen[bytes], Settings]:
    settings = Settings(vault=root, data_dir=root / mode.replace(" ", "-"))
    settings.redis_dir.mkdir(parents=True)
    appendonly, fsync = MODES[mode]
    command = redis_command(settings)
    command[command.index("--appendonly") + 1] = appendonly
    command[command.index("--appendfsync") + 1] = fsync
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True)
    wait_for_redis(settings.effective_redis_url, 10.0, process)
    return process, settings.model_copy(update={"redis_url": settings.effective_redis_url})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--enqueues", type=int, default=2000)
    args = parser.parse_args()
    paths = [f"Projets/Note {i:03d} sur la marée et les dunes.md" for i in range(16)]
    with tempfile.TemporaryDirectory() as tmp:
        servers = {mode: start(mode, Path(tmp)) for mode in MODES}
        queues = {mode: Queues(settings) for mode, (_process, settings) in servers.items()}
        samples: dict[str, list[float]] = {mode: [] for mode in MODES}
        try:
            for _ in range(args.enqueues):
                for mode, queue in queues.items():  # in turns: the machine's load weighs on each alike
                    began = time.perf_counter()
                    queue.sync_batch(paths, priority=10)
                    samples[mode].append((time.perf_counter() - began) * 1000)
            sizes = {mode: aof_bytes(settings) for mode, (_process, settings) in servers.items()}
        finally:
            for process, _settings in servers.values():
                process.terminate()
                process.wait(10)
    stats = {mode: percentiles(values) for mode, values in samples.items()}
    print_table(
        ["append-only file", "enqueues", "p50 ms", "p95 ms", "p99 ms", "mean ms", "file kB"],
        [[m, s["n"], s["p50"], s["p95"], s["p99"], s["mean"], sizes[m] // 1024] for m, s in stats.items()],
    )
    print(f"results: {write_results('redis_aof', {'machine': machine(), 'enqueue_ms': stats, 'aof_bytes': sizes})}")


def aof_bytes(settings: Settings) -> int:
    """The append-only file's size (Redis 7 writes a folder of parts, 6.2 one file)."""
    return sum(p.stat().st_size for p in settings.redis_dir.rglob("appendonly*") if p.is_file())


if __name__ == "__main__":
    main()
