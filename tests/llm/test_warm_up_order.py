"""The mlx worker's warm-up waits for the indexer's start when its supervisor started one: at a restart the
processor goes to searches first (``workers/mlx_worker.py``). A worker alone warms up at once. Real Redis
heartbeats, the bundled model. A stop during the warm-up ends it, or waits for its step under way, before the
process leaves: leaving with the model loading aborted the process."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import redis
from filelock import FileLock

from services.config import BUNDLED_LLM_MODEL, Settings
from services.llm.mlx_backend import MLXBackend
from services.system.generation_client import WORKER_NAME
from services.system.instance import Instance, RecordedProcess, write_instance
from services.system.processes import clear_heartbeat, publish_heartbeat, read_process
from tests.support.generation import redis_client, running_worker, worker_settings
from tests.support.system import wait_until
from workers.mlx_worker import _after_the_indexer
from workers.supervisor import acquire_lock


def started_by_a_supervisor(settings: Settings, children: list[str]) -> None:
    """``instance.json`` as a supervisor writes it, its children all this process (alive)."""
    me = RecordedProcess.of("supervisor", os.getpid())
    assert me is not None
    kids = [me.model_copy(update={"name": name}) for name in children]
    write_instance(Instance(vault=settings.vault, data_dir=settings.data_dir, supervisor=me, children=kids))


def warm_up_thread() -> threading.Thread:
    [warm_up] = [thread for thread in threading.enumerate() if thread.name == "warm-up"]
    return warm_up


def held(redis_url: str, tmp_path: Path) -> tuple[Settings, redis.Redis, FileLock]:
    """Settings that warm the model up, no indexer beating, the data dir held as `obsirag up` holds it."""
    settings = worker_settings(redis_url, tmp_path, llm_warm_up=True, llm_can_write="no")
    client = redis_client(settings)
    clear_heartbeat(client, "indexer")
    return settings, client, acquire_lock(settings)


def test_the_warm_up_waits_for_an_indexer_its_supervisor_started_and_for_no_other(
    redis_url: str, model_cache: Path, tmp_path: Path
) -> None:
    settings, client, lock = held(redis_url, tmp_path)
    assert _after_the_indexer(settings, threading.Event())() is None  # no instance.json: a worker alone, no wait
    started_by_a_supervisor(settings, ["mlx_worker", "web"])
    assert _after_the_indexer(settings, threading.Event())() is None  # no indexer in this system

    started_by_a_supervisor(settings, ["indexer", "mlx_worker"])
    backend = MLXBackend(BUNDLED_LLM_MODEL, model_cache)
    with running_worker(settings, backend) as service:
        wait_until(lambda: read_process(client, WORKER_NAME), "the mlx worker's heartbeat")
        warm_up = warm_up_thread()
        assert warm_up.is_alive() and not backend.loaded  # the worker serves; its warm-up waits
        publish_heartbeat(client, "indexer", time.time(), 1.0)
        warm_up.join(120)
        assert backend.loaded and service.prompt_rate is not None  # loaded, and a prompt read and timed
    clear_heartbeat(client, "indexer")
    lock.release()


def test_a_stop_while_the_warm_up_waits_for_the_indexer_ends_it(
    redis_url: str, model_cache: Path, tmp_path: Path
) -> None:
    settings, client, lock = held(redis_url, tmp_path)
    started_by_a_supervisor(settings, ["indexer", "mlx_worker"])
    backend = MLXBackend(BUNDLED_LLM_MODEL, model_cache)
    with running_worker(settings, backend):
        wait_until(lambda: read_process(client, WORKER_NAME), "the mlx worker's heartbeat")
        warm_up = warm_up_thread()
        assert warm_up.is_alive()  # waiting for an indexer that does not come (30 s)
    assert not warm_up.is_alive() and not backend.loaded  # the stop ended the wait, and nothing was loaded
    lock.release()


def test_a_stop_while_the_warm_up_loads_the_model_waits_for_it_then_unloads(
    redis_url: str, model_cache: Path, tmp_path: Path
) -> None:
    settings = worker_settings(redis_url, tmp_path, llm_warm_up=True, llm_can_write="no")
    backend = MLXBackend(BUNDLED_LLM_MODEL, model_cache)
    loading, load = threading.Event(), backend.load

    def watched_load() -> None:
        loading.set()
        load()

    backend.load = watched_load  # type: ignore[method-assign]
    with running_worker(settings, backend):  # a worker alone: its warm-up starts at once
        assert loading.wait(60)
        warm_up = warm_up_thread()
    assert not warm_up.is_alive() and not backend.loaded  # the load ended before the worker unloaded and left
