"""Starting and stopping a real ObsiRAG system from a benchmark: the supervisor of ``obsirag up``.

A bench that measures a path through the running system (a search through the queue, a chat turn)
starts the same supervisor the product runs, with only the workers that path needs, and waits for
their heartbeats before it times anything.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import ROOT

START_TIMEOUT = 240.0

# ``obsirag up`` with a chosen set of workers: the supervisor's own code (private Redis, child_env, restarts).
_SUPERVISE = """
import sys
from services.config import load_settings
from workers.process import setup_logging, stop_on_signals
from workers.supervisor import supervise
settings = load_settings(vault=sys.argv[1], data_dir=sys.argv[2])
setup_logging(settings, "supervisor")
supervise(settings, stop_on_signals(), workers=tuple(sys.argv[3:]))
"""


def start_system(settings: Any, workers: Sequence[str], log: Path) -> subprocess.Popen[bytes]:
    """``obsirag up`` itself when every worker is wanted, else the same supervisor with only ``workers``."""
    from services.system.processes import WORKERS

    paths = [str(settings.vault), str(settings.data_dir)]
    if set(workers) >= set(WORKERS):
        command = [sys.executable, "-m", "workers.cli", "up", "--vault", paths[0], "--data", paths[1]]
    else:
        command = [sys.executable, "-c", _SUPERVISE, *paths, *workers]
    # Any free port for the web worker (with --workers all): a bench must not fight a running ObsiRAG.
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OBSIRAG_LOG_LEVEL": "WARNING", "OBSIRAG_PORT": "0"}
    with log.open("ab") as sink:
        return subprocess.Popen(command, env=env, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)


def wait_until_ready(client: Any, process: subprocess.Popen[bytes], workers: Sequence[str], log: Path) -> None:
    """Until every worker beats (the indexer's consumers run) and the start-up reconciles left no index work."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the supervisor exited with {process.returncode}:\n{_tail(log)}")
        if _ready(client, workers):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the system was not ready after {START_TIMEOUT:.0f} s:\n{_tail(log)}")
        time.sleep(0.2)  # polling heartbeats in Redis: there is no event to wait on


def _ready(client: Any, workers: Sequence[str]) -> bool:
    from services.system.processes import read_process

    try:
        alive = all(read_process(client.redis, name) for name in workers)
        return alive and client.queues.index.pending_count() == 0
    except Exception:  # Redis not up yet
        return False


def stop_system(process: subprocess.Popen[bytes]) -> None:
    from workers.process import stop_process

    stop_process(process, 60, signal.SIGINT)


def _tail(log: Path, lines: int = 30) -> str:
    try:
        return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
