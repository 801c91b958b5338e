"""Browser tests: Debian's Chromium (headless, through Playwright) against the real system.

One session starts ``obsirag up`` (Redis, indexer, watcher, mlx worker with the bundled model, ner, learner,
web) on a copy of the sample vault, with the fake web search; every test drives the same web server.
Screenshots land in ``tests/artifacts/`` (git-ignored).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import ConsoleMessage, Page

from services.config import Settings
from services.llm.bundled import FOLDER as MODEL_FOLDER
from services.vault import iter_vault_paths
from tests.conftest import ROOT, SAMPLE_VAULT
from tests.e2e.conftest import System, system_env, wait_until
from tests.integration.conftest import converted_model_cache
from workers.process import stop_process

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "tests" / "artifacts"
VIEWPORT = {"width": 1280, "height": 800}
SYSTEM_ENV = {
    "OBSIRAG_PORT": "0",  # any free port: the web process publishes its URL with its heartbeat
    "OBSIRAG_WEB_SEARCH_BACKEND": "fake",
    # The default context: the worker's budget keeps the prompt within ~10 s of reading. A short answer.
    "OBSIRAG_LLM_MAX_TOKENS": "8",
    "OBSIRAG_LEARN_ENABLED": "false",  # no background generation competing with the chat under test
    "OBSIRAG_MEMORY_ENABLED": "false",  # nor a briefing written into the vault under test
    "OBSIRAG_INDEX_RETRIES": "1",
    "OBSIRAG_INDEX_BATCH_NOTES": "4",
}


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    if not CHROMIUM.exists():
        pytest.fail("browser tests need Debian's Chromium: apt-get install -y chromium (make test does it as root)")
    args = [*browser_type_launch_args.get("args", []), "--disable-gpu", "--disable-quic"]
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": args}


@pytest.fixture(scope="session")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[System]:
    """The whole system on a private vault copy, indexed, with its web UI up."""
    root = tmp_path_factory.mktemp("browser")
    vault = root / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    settings = Settings(
        vault=vault, data_dir=root / "data", debounce_seconds=0.2, reconcile_minutes=60, heartbeat_seconds=0.5,
        index_retry_delay=0.2, index_batch_notes=4,
    )  # fmt: skip
    # The bundled model is converted once (~30-60 s) into a cache shared with the generation tests.
    (settings.model_cache).mkdir(parents=True)
    (settings.model_cache / MODEL_FOLDER).symlink_to(converted_model_cache() / MODEL_FOLDER)
    command = [sys.executable, "-m", "workers.cli", "up", "--vault", str(vault), "--data", str(settings.data_dir)]
    process = subprocess.Popen(command, env={**system_env(settings), **SYSTEM_ENV}, cwd=ROOT)
    system = System(settings, process)
    try:
        system.wait_alive(("supervisor", "indexer", "watcher", "mlx_worker", "web"))
        system.wait_indexed(len(list(iter_vault_paths(vault, []))))
        yield system
    finally:
        stop_process(process, 60, signal.SIGINT)


@pytest.fixture(scope="session")
def base_url(live: System) -> str:
    def url() -> str | None:
        state = live.process_state("web")
        return state.details.get("url") if state is not None else None

    return wait_until(url, "the web UI's URL")


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any], base_url: str) -> dict[str, Any]:
    return {**browser_context_args, "base_url": base_url.rstrip("/"), "viewport": VIEWPORT, "locale": "fr-FR"}


@pytest.fixture
def ui(page: Page) -> Iterator[Page]:
    """A page that fails its test on any console error or uncaught exception."""
    problems: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.append(f"console error on {page.url}: {message.text}")

    page.on("console", on_console)
    page.on("pageerror", lambda error: problems.append(f"uncaught error on {page.url}: {error}"))
    page.set_default_timeout(30_000)
    yield page
    assert not problems, "\n".join(problems)


def screenshot(page: Page, name: str) -> Path:
    """Save what a person would see, at 1280×800, under tests/artifacts/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    target = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(target))
    return target
