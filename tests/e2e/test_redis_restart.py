"""Redis killed with SIGKILL in a running system: restarted by the supervisor with its queued tasks, every
surface saying so meanwhile, the watcher reconciling after its return, and a quiet log."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import redis
from click.testing import CliRunner, Result
from huey import PriorityRedisHuey

from services.config import Settings
from tests.support.system import System, wait_until
from workers.cli import main

pytestmark = pytest.mark.e2e

NOTES = {
    "Baie.md": "# Baie\n\nLa marée haute recouvre la baie deux fois par jour.",
    "Dunes.md": "# Dunes\n\nLes oyats retiennent le sable des dunes.",
}
EDITS = {  # each one its own watcher event, hence its own index task
    "Phares/Cordouan.md": "# Cordouan\n\nLe phare de Cordouan veille sur l'estuaire de la Gironde.",
    "Phares/Ar-Men.md": "# Ar-Men\n\nLe phare d'Ar-Men se dresse sur une roche de la chaussée de Sein.",
}

PROCESSES = ("supervisor", "indexer", "watcher", "mlx_worker", "ner", "learner", "extractor", "web")


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """The smallest vault that shows it: two notes, then two edits queued while the indexer is paused."""
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # The CLI and the chat wait search_timeout for a restarting Redis before they say so: keep it short.
    return settings.model_copy(update={"learn_enabled": False, "llm_warm_up": False, "search_timeout": 3.0})


@pytest.fixture
def paused() -> Iterator[list[int]]:
    """Pids the test stopped with SIGSTOP; resumed whatever happens, so the system can stop."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


def test_redis_killed_restarts_with_its_queue_and_every_surface_says_so(
    launch: Callable[[], System], vault: Path, paused: list[int]
) -> None:
    system = launch()
    system.wait_alive(PROCESSES)  # past their start-up: a worker that cannot start without Redis exits
    system.wait_indexed(len(NOTES))
    web_url = system.process_state("web").details["url"]
    supervisor, indexer = system.process.pid, system.process_state("indexer").pid
    client = system.redis
    index = system.queues.index

    # Tasks queued: the indexer paused, two edits each become an index task (its blocking pop may take one).
    os.kill(indexer, signal.SIGSTOP)
    paused.append(indexer)
    for count, (rel, text) in enumerate(EDITS.items(), start=1):
        (vault / rel).parent.mkdir(exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
        wait_until(lambda c=count: len(system.log_lines_with("events: syncing")) >= c, f"edit {count} queued")
    queued = queued_ids(index)
    assert queued
    # What survives a SIGKILL is what Redis wrote to its append-only file (fsync or not): with ``everysec``
    # it holds writes back while a slow fsync runs, and the watcher's reconcile repairs that loss (below).
    wait_until(lambda: client.info("persistence")["aof_buffer_length"] == 0, "queue written to the file")

    # Redis killed while the supervisor is held still: the window in which every surface must tell the truth.
    os.kill(supervisor, signal.SIGSTOP)
    paused.append(supervisor)
    victim = client.info("server")["process_id"]
    mark = len(system.log_lines(""))
    os.kill(victim, signal.SIGKILL)
    wait_until(lambda: not answers(client), "Redis gone")

    status = json.loads(cli(system, "status", "--json").stdout)
    assert status["redis"] == "restarting" and status["running"]
    assert "Redis redémarre" in cli(system, "status").stdout
    for command in (("search", "phare"), ("ask", "Où est le phare de Cordouan ?")):
        failed = cli(system, *command, code=1)  # after waiting search_timeout for Redis to come back
        assert "Redis redémarre" in failed.stderr and isinstance(failed.exception, SystemExit), failed.output
    assert "Redis redémarre" in httpx.get(f"{web_url}admin/live", timeout=30).text
    assert "Redis redémarre" in web_chat_error(web_url, "Où est le phare de Cordouan ?")

    # The supervisor resumes: Redis back from its append-only file, the queued tasks still there.
    os.kill(supervisor, signal.SIGCONT)
    wait_until(lambda: answers(client) and client.info("server")["process_id"] != victim, "Redis restarted")
    assert queued <= queued_ids(index)
    # The watcher sees a new Redis and reconciles: the two edits the catalog lacks are queued again.
    wait_until(lambda: re.search(r"watcher\[\d+\].*reconcile: 2 notes", "\n".join(system.log_lines())), "reconcile")
    os.kill(indexer, signal.SIGCONT)
    wait_until(lambda: system.search("phare de Cordouan estuaire")[:1] == ["Phares/Cordouan.md"], "queued edit ran")
    wait_until(lambda: system.search("phare Ar-Men chaussée de Sein")[:1] == ["Phares/Ar-Men.md"], "both ran")
    assert json.loads(cli(system, "status", "--json").stdout)["redis"] == "ready"
    assert system.process_state("indexer").pid == indexer  # the workers reconnected by themselves

    # A calm log: per process at most one line when Redis went and one when it came back, no traceback.
    since = system.log_lines("")[mark:]
    assert not [line for line in since if "Traceback" in line or "Error reading" in line], "\n".join(since)
    for process in PROCESSES:
        mine = [line for line in since if re.search(rf"\b{process}\[\d+\]", line)]
        assert sum("Redis injoignable" in line for line in mine) <= 1, "\n".join(mine)
        assert sum("Redis de retour" in line for line in mine) <= 1, "\n".join(mine)
    assert len(since) < 40, "\n".join(since)
    system.stop()


def queued_ids(huey: PriorityRedisHuey) -> set[str]:
    return {huey.serializer.deserialize(data).id for data in huey.storage.enqueued_items()}


def answers(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


def cli(system: System, *args: str, code: int = 0) -> Result:
    """``obsirag ARGS`` in this process (a fresh interpreter per command costs seconds on a loaded machine)."""
    where = ["--vault", str(system.settings.vault), "--data", str(system.settings.data_dir)]
    env = {"OBSIRAG_SEARCH_TIMEOUT": str(system.settings.search_timeout)}
    result = CliRunner().invoke(main, [*args, *where], env=env)
    assert result.exit_code == code, (result.output, result.exception)
    return result


def web_chat_error(web_url: str, question: str) -> str:
    """The chat's answer to ``question`` as the browser receives it (its SSE stream)."""
    with httpx.Client(base_url=web_url, timeout=60) as browser:
        browser.get("/")
        headers = {"x-csrftoken": browser.cookies["obsirag_csrf"]}
        asked = browser.post("/chat/ask", data={"question": question}, headers=headers)
        run_id = re.search(r'sse-connect="/chat/stream/([0-9a-f]+)"', asked.text)[1]
        return browser.get(f"/chat/stream/{run_id}").text
