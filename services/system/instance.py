"""``<data>/instance.json``: which processes run this data folder, so that nothing of it is ever left behind.

The supervisor writes it at start and at each change of a child (started, dead); ``obsirag up`` reads the
previous one: a live supervisor refuses the start, a dead one's surviving children are stopped first (each
checked against the start time and command line recorded, so that a pid the system gave to another
program since is never touched). The CLI finds the running instances of a data root here too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import psutil
from pydantic import BaseModel, Field

INSTANCE_FILE = "instance.json"
SAME_START = 0.05  # seconds: a start time read twice from /proc differs by rounding at most


class RecordedProcess(BaseModel):
    name: str
    pid: int
    started: float  # the process's start time (psutil's create_time): a reused pid has another
    command: list[str]
    alive: bool = True
    exit_code: int | None = None

    @classmethod
    def of(cls, name: str, pid: int) -> RecordedProcess | None:
        """``pid`` as the system sees it now; None when it is gone."""
        try:
            process = psutil.Process(pid)
            return cls(name=name, pid=pid, started=process.create_time(), command=process.cmdline())
        except psutil.Error:
            return None

    def running(self) -> psutil.Process | None:
        """The process itself when it still runs (same pid, start time and command line), else None."""
        try:
            process = psutil.Process(self.pid)
            same = abs(process.create_time() - self.started) < SAME_START and process.cmdline() == self.command
            return process if same and process.status() != psutil.STATUS_ZOMBIE else None
        except psutil.Error:
            return None


class Instance(BaseModel):
    vault: Path
    data_dir: Path
    supervisor: RecordedProcess
    children: list[RecordedProcess] = Field(default_factory=list)
    updated: float = Field(default_factory=time.time)

    def alive(self) -> bool:
        return self.supervisor.running() is not None

    def leftovers(self) -> list[psutil.Process]:
        """The children still running, checked one by one (never a pid reused by another program)."""
        return [process for child in self.children if (process := child.running()) is not None]


def instance_path(data_dir: Path) -> Path:
    return data_dir / INSTANCE_FILE


def write_instance(instance: Instance) -> None:
    """Atomically: a reader never sees half a file."""
    path = instance_path(instance.data_dir)
    temporary = path.with_name(f".{INSTANCE_FILE}.{os.getpid()}")
    temporary.write_text(instance.model_dump_json(indent=1), encoding="utf-8")
    os.replace(temporary, path)


def read_instance(data_dir: Path) -> Instance | None:
    try:
        return Instance.model_validate_json(instance_path(data_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def forget_instance(data_dir: Path) -> None:
    instance_path(data_dir).unlink(missing_ok=True)


def running_instances(data_root: Path) -> list[Instance]:
    """The instances of ``data_root``'s data folders whose supervisor runs, by vault."""
    try:
        folders = sorted(p for p in data_root.iterdir() if p.is_dir())
    except OSError:
        return []
    found = [instance for folder in folders if (instance := read_instance(folder)) is not None]
    return [instance for instance in found if instance.alive()]


def stop_processes(processes: list[psutil.Process], timeout: float = 10.0) -> None:
    """SIGTERM (Redis writes its file, a worker ends its task), SIGKILL for what is left after ``timeout``."""
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.send_signal(signal.SIGTERM)
    _gone, alive = psutil.wait_procs(processes, timeout=timeout)
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(alive, timeout=5)


def describe(processes: list[RecordedProcess]) -> str:
    return ", ".join(f"{p.name} (pid {p.pid})" for p in processes)
