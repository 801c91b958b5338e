"""One whole running system for the session, shared by the browser and the MCP tests.

``obsirag up`` (Redis, indexer, watcher, mlx worker with the bundled model, ner, web; learner off) on a
copy of the sample vault, with the fake web search, a short answer cap and an MCP token. Tests may add
notes to its vault; none may rely on it staying the sample vault.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # imported inside the fixtures: every test run loads this module through tests/conftest.py
    from tests.support.system import System

ROOT = Path(__file__).resolve().parents[2]
MCP_TOKEN = "mcp-test-token"
SYSTEM_ENV = {
    "OBSIRAG_PORT": "0",  # any free port: the web process publishes its URL with its heartbeat
    "OBSIRAG_WEB_SEARCH_BACKEND": "fake",
    # The default context: the worker's budget keeps the prompt within ~10 s of reading. A short answer.
    "OBSIRAG_LLM_MAX_TOKENS": "8",
    "OBSIRAG_LEARN_ENABLED": "false",  # no background generation competing with the chat under test
    "OBSIRAG_MEMORY_ENABLED": "false",  # nor a briefing written into the vault under test
    "OBSIRAG_INDEX_RETRIES": "1",
    "OBSIRAG_INDEX_BATCH_NOTES": "4",
    "OBSIRAG_MCP_TOKEN": MCP_TOKEN,  # /mcp needs it even on loopback (the browser never goes there)
}


@pytest.fixture(scope="session")
def live(tmp_path_factory: pytest.TempPathFactory, sample_caches: Path) -> Iterator[System]:
    """The whole system on a private vault copy, indexed, with its web UI up."""
    from services.config import Settings
    from services.vault import iter_vault_paths
    from tests.support.system import System, seed_sample_caches, share_converted_model, system_env
    from workers.process import stop_process

    root = tmp_path_factory.mktemp("live")
    vault = root / "vault"
    shutil.copytree(ROOT / "examples" / "vault", vault)
    settings = Settings(
        vault=vault,
        data_dir=root / "data",
        debounce_seconds=0.2,
        reconcile_minutes=60,
        heartbeat_seconds=0.5,
        index_retry_delay=0.2,
        index_batch_notes=4,
    )
    share_converted_model(settings)  # converted once (~30-60 s), shared with the generation tests
    seed_sample_caches(settings, sample_caches)  # the sample vault's vectors, embedded once per run
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
def live_url(live: System) -> str:
    """The live system's web UI, e.g. ``http://127.0.0.1:41234/``."""
    from tests.support.system import wait_until

    def url() -> str | None:
        state = live.process_state("web")
        return state.details.get("url") if state is not None else None

    return wait_until(url, "the web UI's URL")
