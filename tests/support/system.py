"""Run the real system (``obsirag up``: Redis, watcher, indexer) as a subprocess."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis

from services.catalog import Catalog
from services.catalog.models import NoteStatus
from services.config import Settings
from services.retrieval.search import SearchRequest
from services.system.processes import read_process
from services.system.queues import Queues
from workers.cli import run_search
from workers.process import stop_process

DEADLINE = 180.0


def wait_until(predicate: Callable[[], Any], what: str, timeout: float = DEADLINE) -> Any:
    """Poll ``predicate`` until it returns a truthy value; fail with ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)  # polling an observable condition, not synchronising on time


@dataclass
class System:
    settings: Settings
    process: subprocess.Popen[bytes]
    log_path: Path | None = None  # the supervisor's and its children's output, when captured

    def log_lines(self, level: str = "INFO") -> list[str]:
        """The lines logged at ``level`` so far (every line for ``""``), whatever their format (a library's
        own one included)."""
        assert self.log_path is not None, "this system's output is not captured"
        lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        return [line for line in lines if not level or re.search(rf"\b{level}\b", line)]

    def log_lines_with(self, text: str) -> list[str]:
        return [line for line in self.log_lines("") if text in line]

    @property
    def env(self) -> dict[str, str]:
        return system_env(self.settings)

    @property
    def redis(self) -> redis.Redis:
        return redis.Redis.from_url(self.settings.effective_redis_url)

    def process_state(self, name: str):
        try:
            return read_process(self.redis, name)
        except (redis.ConnectionError, FileNotFoundError):
            return None

    def catalog_counts(self) -> dict[NoteStatus, int]:
        catalog = Catalog(self.settings.catalog_path)
        try:
            return catalog.status_counts()
        finally:
            catalog.close()

    @property
    def queues(self) -> Queues:
        return Queues(self.settings.model_copy(update={"redis_url": self.settings.effective_redis_url}))

    def index_idle(self) -> bool:
        return self.queues.index.pending_count() == 0

    def search(self, query: str, **kwargs: Any) -> list[str]:
        settings = self.settings.model_copy(update={"redis_url": self.settings.effective_redis_url})
        return [r.path for r in run_search(settings, SearchRequest(query=query, **kwargs)).results]

    def cli(self, *args: str) -> str:
        command = [sys.executable, "-m", "workers.cli", *args]
        command += ["--vault", str(self.settings.vault), "--data", str(self.settings.data_dir)]
        done = subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=120, check=True)
        return done.stdout

    def cli_json(self, *args: str) -> Any:
        return json.loads(self.cli(*args, "--json"))

    def wait_alive(self, names: tuple[str, ...] = ("supervisor", "indexer", "watcher")) -> None:
        wait_until(lambda: all(self.process_state(n) for n in names), f"processes {names} alive")

    def wait_indexed(self, count: int) -> None:
        wait_until(
            lambda: self.catalog_counts().get(NoteStatus.INDEXED, 0) >= count and self.index_idle(),
            f"{count} notes indexed",
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(60)
        assert self.process.returncode == 0, f"supervisor exited with {self.process.returncode}"


def system_env(settings: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OBSIRAG_")}
    env.update(
        OBSIRAG_DEBOUNCE_SECONDS=str(settings.debounce_seconds),
        OBSIRAG_HEARTBEAT_SECONDS=str(settings.heartbeat_seconds),
        OBSIRAG_INDEX_RETRY_DELAY=str(settings.index_retry_delay),
        OBSIRAG_RECONCILE_MINUTES=str(settings.reconcile_minutes),
        OBSIRAG_INDEX_BATCH_NOTES=str(settings.index_batch_notes),
        OBSIRAG_LLM_WARM_UP=str(settings.llm_warm_up),
        OBSIRAG_SEARCH_TIMEOUT=str(settings.search_timeout),
        OBSIRAG_BACKGROUND_NICE=str(settings.background_nice),
        OBSIRAG_STORE_OPTIMIZE_AFTER_POINTS=str(settings.store_optimize_after_points),
        OBSIRAG_PORT=str(settings.port),  # 0: any free port, published with the web's heartbeat
        # Memory's daily work (consolidation, mirrors, briefing) only where a test asks for it.
        OBSIRAG_MEMORY_ENABLED=str(settings.memory_enabled),
        PYTHONUNBUFFERED="1",
    )
    from tests.support.generation import shared_data_root

    # Its data dir is always given (--data): the data root only holds the shared model cache.
    env["OBSIRAG_DATA_ROOT"] = str(shared_data_root())
    if settings.learn_enabled is not None:
        env["OBSIRAG_LEARN_ENABLED"] = str(settings.learn_enabled)
    return env


def share_converted_model(settings: Settings) -> None:
    """The bundled model, converted once per machine (``tests.support.generation``) before ``settings``'
    system starts: it finds it in the model cache of the data root ``system_env`` gives it (every system
    started by a test converted it again otherwise, ~60-120 s of both cores)."""
    from tests.support.generation import shared_data_root

    shared_data_root()


def seed_sample_caches(settings: Settings, sample: Path) -> None:
    """Start ``settings``' data dir with copies of the embedding and extraction caches of ``sample`` (the
    ``sample_caches`` fixture's data dir): the sample vault's texts embedded and its diagram read once."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    for name in (settings.embedding_cache_path.name, settings.extraction_cache_path.name):
        shutil.copyfile(sample / name, settings.data_dir / name)


def start_system(settings: Settings) -> System:
    """``obsirag up``; its output (every process's log) goes to ``up-N.log`` beside the data dir."""
    share_converted_model(settings)
    command = [sys.executable, "-m", "workers.cli", "up", "--vault", str(settings.vault)]
    command += ["--data", str(settings.data_dir)]
    runs = len(list(settings.data_dir.parent.glob("up-*.log")))
    log_path = settings.data_dir.parent / f"up-{runs + 1}.log"
    with log_path.open("wb") as output:  # the children inherit the file, which outlives this handle
        process = subprocess.Popen(
            command,
            env=system_env(settings),
            cwd=Path(__file__).resolve().parents[2],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    return System(settings, process, log_path)


@pytest.fixture
def launch(settings: Settings, sample_caches: Path) -> Iterator[Callable[[], System]]:
    """Start the system on the test's vault copy (call it again after a stop to restart it), its embedding
    cache seeded with the sample vault's (``tests/conftest.py``)."""
    seed_sample_caches(settings, sample_caches)
    started: list[System] = []

    def _launch() -> System:
        system = start_system(settings)
        started.append(system)
        system.wait_alive()
        return system

    yield _launch
    for system in started:
        stop_process(system.process, 60, signal.SIGINT)
