"""Kill anything (#41 points 1-3), on the real processes: a supervisor killed -9 takes its children with it
and the next ``obsirag up`` starts cleanly; a second ``up`` is refused; the address printed is the one
served; a killed process is shown dead within a second; a killed extractor's document is read again at once."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import httpx
import psutil
import pytest
from click.testing import CliRunner

from services.attachments.cache import read_progress
from services.catalog import Catalog
from services.catalog.models import NoteStatus
from services.config import Settings
from services.system import SystemClient
from services.system.instance import read_instance
from tests.conftest import ROOT
from tests.support import documents as docs
from tests.support.document_fixtures import SCAN
from tests.support.system import System, wait_until
from workers.cli import main

pytestmark = pytest.mark.e2e

SCAN_PATH = "Attachments/Relevé long.pdf"
WORKERS = ("supervisor", "indexer", "watcher", "extractor", "web")


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port another program serves on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield other.getsockname()[1]


@pytest.fixture
def settings(settings: Settings, busy_port: int) -> Settings:
    # The default heartbeat (2 s, expiring after 6 s): what /admin and `obsirag status` showed a dead process by.
    return settings.model_copy(update={"port": busy_port, "heartbeat_seconds": 2.0})


def alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_kill_anything_then_up_again(launch: Callable[[], System], settings: Settings, busy_port: int) -> None:
    # Seconds of OCR, so the reader is killed midway: first thing, before a slow machine has read it all.
    docs.scanned_pdf(settings.vault / SCAN_PATH, [SCAN] * 24, crop=True)
    system = launch()
    system.wait_alive(WORKERS)
    assert_a_killed_extractor_resumes_at_once(system)
    assert_the_address_printed_is_the_one_served(system, busy_port)
    assert_a_second_up_is_refused(system)
    assert_a_killed_supervisor_leaves_nothing(system)

    again = launch()  # one `obsirag up`, on what the killed one left
    again.wait_alive(WORKERS)
    again.wait_indexed(system_total(again))
    assert not again.log_lines_with("Traceback") and not again.log_lines_with("StoreLockedError")
    family = psutil.Process(again.process.pid).children(recursive=True)
    where = ["--vault", str(settings.vault), "--data", str(settings.data_dir)]
    down = CliRunner().invoke(main, ["down", *where], env={"OBSIRAG_DATA_ROOT": None})  # from another terminal
    assert down.exit_code == 0 and f"ObsiRAG arrêté (superviseur pid {again.process.pid}" in down.stdout
    assert again.process.wait(60) == 0 and not [p for p in family if alive(p)]
    assert read_instance(settings.data_dir) is None  # a clean stop leaves no record behind


def assert_the_address_printed_is_the_one_served(system: System, busy_port: int) -> None:
    printed = wait_until(lambda: system.log_lines_with("Interface web : "), "the web address printed")
    [url] = re.findall(r"Interface web : (\S+)", printed[0])
    assert url == system.process_state("web").details["url"] and f":{busy_port}/" not in url
    assert [f"Le port {busy_port} est déjà pris : l’interface web sert sur {url} à la place."] == [
        line for line in system.log_lines("") if "déjà pris" in line
    ]
    assert httpx.get(f"{url}admin", timeout=30).status_code == 200


def assert_a_second_up_is_refused(system: System) -> None:
    command = [sys.executable, "-m", "workers.cli", "up", "--vault", str(system.settings.vault)]
    command += ["--data", str(system.settings.data_dir)]
    second = subprocess.run(command, env=system.env, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert second.returncode == 1 and second.stderr.count("\n") == 1, second.stderr
    assert f"tourne déjà sur {system.settings.data_dir} (superviseur pid {system.process.pid})" in second.stderr
    assert "obsirag down" in second.stderr


def assert_a_killed_extractor_resumes_at_once(system: System) -> None:
    settings = system.settings
    reading = lambda: [r for r in read_progress(settings.extraction_cache_path) if r.done >= 1]  # noqa: E731
    wait_until(lambda: reading() or indexed(settings, SCAN_PATH), "scan read")
    assert not indexed(settings, SCAN_PATH), "the scan was read whole before the extractor could be killed"
    extractor = psutil.Process(system.process_state("extractor").pid)
    readers = extractor.children(recursive=True)  # the fork server, the reader, its Tesseract
    client = SystemClient(settings.model_copy(update={"redis_url": settings.effective_redis_url}))
    extractor.kill()
    killed = time.monotonic()
    shown_dead = lambda: (state := client.status().process("extractor")) is None or state.pid != extractor.pid  # noqa: E731
    wait_until(shown_dead, "the extractor shown dead", timeout=1.0)
    assert time.monotonic() - killed < 1.0
    web = system.process_state("web").details["url"]
    assert f"Lecture de {SCAN_PATH} en cours" in httpx.get(f"{web}admin/live", timeout=30).text
    wait_until(lambda: not [p for p in readers if alive(p)], "the reader gone with the extractor", timeout=5)
    # Read again by the restarted extractor, not by the reconcile (an hour away in these settings).
    wait_until(lambda: indexed(settings, SCAN_PATH), "the scan indexed after the extractor's death", timeout=120)


def indexed(settings: Settings, path: str) -> bool:
    with Catalog(settings.catalog_path) as catalog:
        note = catalog.get_note(path)
    return note is not None and note.status is NoteStatus.INDEXED


def assert_a_killed_supervisor_leaves_nothing(system: System) -> None:
    supervisor = psutil.Process(system.process.pid)
    family = supervisor.children(recursive=True)  # Redis and every worker (and what they started)
    assert len(family) >= 6
    os.kill(supervisor.pid, signal.SIGKILL)
    system.process.wait()
    wait_until(lambda: not [p for p in family if alive(p)], "no process of the instance left", timeout=5)


def system_total(system: System) -> int:
    from services.config import DEFAULT_ATTACHMENTS
    from services.vault import iter_vault_paths

    return len(list(iter_vault_paths(system.settings.vault, [], attachments=DEFAULT_ATTACHMENTS)))
