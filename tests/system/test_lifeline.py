"""A child dies with its parent, and ``obsirag up`` stops what a dead supervisor left: on real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest
import redis

from services.config import Settings
from services.lifeline import PARENT_ENV
from services.system.instance import Instance, RecordedProcess, read_instance, write_instance
from tests.support.system import wait_until
from workers.supervisor import AlreadyRunning, start_redis, stop_leftovers

ROOT = Path(__file__).resolve().parents[2]
# A parent that starts one sleeping child, prints its pid, and waits to be killed.
PARENT = """
import os, subprocess, sys, time
from services.lifeline import die_with_parent
preexec = die_with_parent() if sys.argv[1] == "prctl" else None
env = {**os.environ, "OBSIRAG_SUPERVISOR_PID": str(os.getpid())}
child = subprocess.Popen([sys.executable, "-c", sys.argv[2]], env=env, preexec_fn=preexec)
print(child.pid, flush=True)
time.sleep(120)
"""
# The child: a worker's parent watch only (the macOS guard), or nothing of its own (the kernel's signal).
WATCHING = "from services.lifeline import watch_parent; import time; watch_parent(poll=0.05); time.sleep(120)"
SLEEPING = "import time; time.sleep(120)"


def orphan_of(mode: str, child_code: str) -> tuple[subprocess.Popen[str], int]:
    parent = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(PARENT), mode, child_code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    return parent, int(parent.stdout.readline())


@pytest.mark.parametrize(("mode", "child_code"), [("prctl", SLEEPING), ("watch", WATCHING)])
def test_a_child_dies_with_its_parent_killed_9(mode: str, child_code: str) -> None:
    parent, child = orphan_of(mode, child_code)
    assert psutil.Process(child).ppid() == parent.pid
    parent.kill()
    parent.wait()
    gone = lambda: not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE  # noqa: E731
    wait_until(gone, f"the child of a killed parent gone ({mode})", timeout=5)


def test_up_stops_what_a_dead_supervisor_left_and_nothing_else(tmp_path: Path) -> None:
    settings = Settings(vault=tmp_path, data_dir=tmp_path / "data")
    settings.data_dir.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    supervisor = RecordedProcess.of("supervisor", dead.pid)
    dead.wait()
    left = subprocess.Popen([sys.executable, "-c", SLEEPING])
    stranger = subprocess.Popen([sys.executable, "-c", SLEEPING])  # the pid a dead child had, given to another
    wait_until(lambda: RecordedProcess.of("x", left.pid).command[-1] == SLEEPING, "the child's command line")
    reused = RecordedProcess.of("indexer", stranger.pid).model_copy(update={"command": ["python", "-m", "x"]})
    children = [RecordedProcess.of("ner", left.pid), reused]
    write_instance(Instance(vault=tmp_path, data_dir=settings.data_dir, supervisor=supervisor, children=children))
    try:
        assert not read_instance(settings.data_dir).alive()
        stopped = stop_leftovers(settings)
        assert [(p.name, p.pid) for p in stopped] == [("ner", left.pid)]
        left.wait(10)  # stopped (psutil reaped it: its exit code is psutil's to know)
        assert stranger.poll() is None
        assert read_instance(settings.data_dir) is None
    finally:
        stranger.kill()
        left.kill()


def test_never_a_second_redis_on_a_socket_a_live_redis_holds(redis_url: str) -> None:
    socket = Path(redis_url.removeprefix("unix://"))
    data = socket.parent.parent
    settings = Settings(vault=data, data_dir=data)
    assert settings.redis_socket == socket
    with pytest.raises(AlreadyRunning, match=r"Un Redis \(pid \d+\) répond déjà"):
        start_redis(settings, {**os.environ, PARENT_ENV: str(os.getpid())})
    assert socket.exists() and redis.Redis.from_url(redis_url).ping()
