"""Generation fixtures: the bundled model converted once, a real worker consumer in threads."""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
import threading
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import pytest
import redis

from services.config import Settings
from services.llm import bundled
from services.llm.backend import Backend
from services.llm.serving import GenerationService, Limits
from services.system.queues import Queues
from workers.mlx_worker import build_service, serve


def shared_data_root() -> Path:
    """A data root whose model cache (``<root>/models``) holds the converted bundled model, reused by every
    test and later test runs: started systems get it as ``OBSIRAG_DATA_ROOT`` (their data dirs are given).

    Converting costs ~60-120 s on two cores, so the result is kept in the system's temp folder under a
    key that changes with the converter's code and the libraries it uses. A fresh machine converts once;
    concurrent callers are safe (the converter's lock and atomic rename).
    """
    recipe = [Path(bundled.__file__).read_bytes(), str(bundled.gguf_path().stat().st_size).encode()]
    recipe += [version(name).encode() for name in ("transformers", "gguf", "mlx-lm")]
    key = hashlib.sha1(b"\0".join(recipe)).hexdigest()[:12]
    root = Path(tempfile.gettempdir()) / "obsirag-test-models" / key
    bundled.ensure_converted(root / "models")
    return root


def converted_model_cache() -> Path:
    """A model cache holding the converted bundled model (``shared_data_root``'s)."""
    return shared_data_root() / "models"


@pytest.fixture(scope="session")
def model_cache() -> Path:
    return converted_model_cache()


def worker_settings(redis_url: str, tmp: Path, **overrides: object) -> Settings:
    return Settings(vault=tmp, data_dir=tmp / "data", redis_url=redis_url, heartbeat_seconds=0.5, **overrides)


@contextlib.contextmanager
def running_worker(
    settings: Settings, backend: Backend | None = None, limits: Limits | None = None
) -> Iterator[GenerationService]:
    """The mlx worker's real loop (one Huey consumer thread, heartbeats) in a thread of this process,
    on ``backend`` (default: the configured one) with ``limits`` (default: ``Limits()``)."""
    queues = Queues(settings)
    queues.hueys["generate"].flush()  # nothing left over from another test module
    stop = threading.Event()
    service = build_service(settings, queues, stop, backend, limits or Limits())
    thread = threading.Thread(target=serve, args=(settings, stop, queues, service), name="mlx-worker", daemon=True)
    thread.start()
    try:
        yield service
    finally:
        stop.set()
        thread.join(60)
        queues.hueys["generate"].flush()


def redis_client(settings: Settings) -> redis.Redis:
    return redis.Redis.from_url(settings.effective_redis_url)
