"""Huey queues (one PriorityRedisHuey per queue) and the tasks they carry.

Producers (watcher, CLI, web) call the task functions to enqueue; consumers (indexer, …) bind the
services the task bodies need with ``bind_pipeline`` before starting their consumer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from huey import PriorityRedisHuey

from services.config import Settings

if TYPE_CHECKING:
    from services.indexing import IndexPipeline
    from services.search import SearchEngine

QUEUE_NAMES = ("index", "search", "enrich", "learn", "generate")
EVENT_PRIORITY = 10  # a user's edit goes before the bulk of a reconcile
RECONCILE_PRIORITY = 0


@dataclass
class _Bound:
    pipeline: IndexPipeline | None = None
    search: SearchEngine | None = None
    queues: Queues | None = None


_bound = _Bound()


def bind_pipeline(pipeline: IndexPipeline, search: SearchEngine, queues: Queues) -> None:
    """Called once by the process that owns the store, before its consumers start."""
    _bound.pipeline = pipeline
    _bound.search = search
    _bound.queues = queues


def _pipeline() -> IndexPipeline:
    if _bound.pipeline is None:
        raise RuntimeError("index tasks run only in the indexer process")
    return _bound.pipeline


def _engine() -> SearchEngine:
    if _bound.search is None:
        raise RuntimeError("search tasks run only in the indexer process")
    return _bound.search


def sync_batch(paths: list[str]) -> dict[str, Any]:
    """Bring a batch of notes in line with the disk; notes that fail are retried one by one."""
    report = _pipeline().sync_paths(paths)
    if _bound.queues is not None:
        for path in report.failed:
            _bound.queues.sync_note(path, priority=RECONCILE_PRIORITY)
    return report.model_dump()


def sync_note(path: str) -> dict[str, Any]:
    """One note; raises on failure so that Huey retries it with backoff."""
    return _pipeline().sync_paths([path], raise_errors=True).model_dump()


def rebuild_index() -> int:
    """Forget the whole index, then queue every note of the vault again."""
    from services import vault

    pipeline = _pipeline()
    pipeline.rebuild()
    paths = list(vault.iter_vault_paths(pipeline.settings.vault, pipeline.settings.exclude))
    if _bound.queues is not None:
        _bound.queues.enqueue_paths(paths, pipeline.settings.index_batch_notes, RECONCILE_PRIORITY)
    return len(paths)


def run_search(request: dict[str, Any]) -> dict[str, Any]:
    from services.search import SearchRequest

    return _engine().search(SearchRequest.model_validate(request)).model_dump(mode="json")


class Queues:
    """The Huey instances of one ObsiRAG installation and the task handles bound to them."""

    def __init__(self, settings: Settings) -> None:
        url = settings.effective_redis_url
        self.hueys = {name: _make_huey(name, url) for name in QUEUE_NAMES}
        retry = {"retries": settings.index_retries, "retry_delay": settings.index_retry_delay}
        index = self.hueys["index"]
        self.sync_batch = index.task(name="sync_batch")(sync_batch)
        self.sync_note = index.task(name="sync_note", retry_backoff=2, **retry)(sync_note)
        self.rebuild_index = index.task(name="rebuild_index", priority=EVENT_PRIORITY + 10)(rebuild_index)
        self.run_search = self.hueys["search"].task(name="run_search", expires=30)(run_search)

    @property
    def index(self) -> PriorityRedisHuey:
        return self.hueys["index"]

    @property
    def search(self) -> PriorityRedisHuey:
        return self.hueys["search"]

    def enqueue_paths(self, paths: list[str], batch: int, priority: int) -> int:
        """Enqueue ``paths`` in batches; returns how many tasks were enqueued."""
        chunks = [paths[i : i + batch] for i in range(0, len(paths), batch)]
        for chunk in chunks:
            self.sync_batch(chunk, priority=priority)
        return len(chunks)

    def depths(self) -> dict[str, dict[str, int]]:
        return {
            name: {"pending": huey.pending_count(), "scheduled": huey.scheduled_count()}
            for name, huey in self.hueys.items()
        }


def _make_huey(name: str, url: str) -> PriorityRedisHuey:
    return PriorityRedisHuey(
        f"obsirag-{name}",
        url=url,
        utc=True,
        # Push-based result waits (6 ms vs 55 ms polling), and get() must not raise while retries remain.
        notify_result=True,
        store_intermediate_errors=False,
    )
