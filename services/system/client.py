"""How the CLI, the web app, the learner (and later MCP) talk to a running ObsiRAG: the one client.

``SystemClient.running()`` is the one answer to "is the system running?" (its indexer, which owns the
index, beats); ``status()`` gathers what ``obsirag status`` and the dashboard both show.
"""

from __future__ import annotations

import threading
import time
from functools import cached_property
from typing import Any

import redis
from huey.exceptions import ResultTimeout
from pydantic import BaseModel, Field

from services.attachments.cache import ExtractionProgress, read_pace
from services.attachments.cache import read_progress as read_extractions
from services.catalog import Catalog
from services.catalog.models import NoteStatus
from services.catalog.problems import Lang, NoteProblem, note_problems
from services.config import Settings
from services.connectors.views import ConnectorView, connector_views
from services.indexing.rebuild_record import RebuildProgress, read_progress
from services.language.durations import short_duration
from services.llm.models import WorkerState
from services.retrieval.search import SearchRequest, SearchResponse
from services.system.generation_client import GenerationClient, worker_state
from services.system.history import QueueState, TaskHistory, TaskRecord, queue_state, retry
from services.system.processes import PROCESSES, ProcessState, read_process, read_processes
from services.system.queues import Queues
from services.system.supervision import STARTING, RedisState, redis_message, redis_state, supervisor_alive
from services.system.sync_progress import SyncProgress, sync_progress

RETRYABLE = ("sync_batch", "sync_note", "rebuild_index")  # the tasks the dashboard offers to run again
DOWN = (redis.ConnectionError, redis.TimeoutError, FileNotFoundError)  # FileNotFoundError: no Redis socket
NOT_RUNNING = "ObsiRAG is not running: start it with `obsirag up` (or `make run`)"
NOT_RUNNING_FR = "ObsiRAG ne tourne pas : lance `obsirag up` (ou `make run`)."  # the web UI's and French CLI's


class SystemNotRunning(RuntimeError):
    pass


class ExtractionBacklog(BaseModel):
    """The documents still to read (queued for the extract worker, or being read) and when all will be."""

    remaining: int
    eta_seconds: float | None = None  # remaining × the median time of the last documents read; None until known

    def line(self, lang: Lang = "en") -> str:
        """``obsirag status``'s line for it."""
        left = short_duration(self.eta_seconds) if self.eta_seconds is not None else ""
        if lang == "fr":
            return f"documents à lire : {self.remaining}" + (f", encore environ {left}" if left else "")
        return f"documents to read: {self.remaining}" + (f", about {left} left" if left else "")


class SystemStatus(BaseModel):
    running: bool  # some process of the system beats, or the supervisor holds the data dir (Redis restarting)
    notes: dict[str, int]
    queues: dict[str, dict[str, int]]
    processes: list[ProcessState]
    generation: WorkerState | None = None  # the mlx worker's published state, when it runs
    rebuild: RebuildProgress | None = None  # an index rebuild beside the live one, under way
    problems: list[NoteProblem] = Field(default_factory=list)  # skipped, failed, indexed with a warning
    web_url: str | None = None  # where the web UI listens (a free port when the configured one was busy)
    queue_tasks: list[QueueState] = Field(default_factory=list)  # the first tasks of each queue, when asked
    redis: RedisState = RedisState.READY  # "restarting": the supervisor runs, its Redis is coming back
    extractions: list[ExtractionProgress] = Field(default_factory=list)  # documents being read (pages done)
    extraction_backlog: ExtractionBacklog | None = None  # documents left to read in all; None when none waits
    sync: SyncProgress | None = None  # what the last reconcile found, being indexed (a first index); None when done
    connectors: list[ConnectorView] = Field(default_factory=list)  # connected mail and calendars, last syncs

    def redis_message(self, lang: Lang = "en") -> str | None:
        """The line every surface shows while Redis does not answer (None when it does or nothing runs)."""
        return redis_message(self.redis, lang)

    def process(self, name: str) -> ProcessState | None:
        """``name``'s heartbeat, when it is alive."""
        return next((p for p in self.processes if p.name == name and p.alive), None)


class SystemClient:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._kept_catalog: Catalog | None = None

    def _catalog(self) -> Catalog | None:
        """The catalog once it exists, kept open: it reads its counts again only after a change (the dashboard
        asks every 2 s)."""
        if self._kept_catalog is None and self.settings.catalog_path.exists():
            self._kept_catalog = Catalog(self.settings.catalog_path)
        return self._kept_catalog

    @cached_property
    def redis(self) -> redis.Redis:
        return redis.Redis.from_url(self.settings.effective_redis_url, socket_connect_timeout=1)

    @cached_property
    def queues(self) -> Queues:
        return Queues(self.settings)

    @cached_property
    def generation(self) -> GenerationClient:
        """Submit, stream, cancel a generation; the worker's state."""
        return GenerationClient(self.settings)

    @cached_property
    def history(self) -> TaskHistory:
        return TaskHistory(self.redis)

    def running(self) -> bool:
        """Whether the indexer beats: searches, similar notes and reindexing go through it."""
        try:
            return read_process(self.redis, "indexer") is not None
        except DOWN:
            return False

    def wait_running(self, timeout: float, stop: threading.Event | None = None) -> bool:
        """``running()``, waiting up to ``timeout`` seconds while the supervisor runs (Redis or the indexer
        restarting) and ``stop`` is not set: a caller then goes through the system, never around it."""
        deadline = time.monotonic() + timeout
        stop = stop or threading.Event()
        while not self.running():
            if time.monotonic() > deadline or stop.is_set() or not supervisor_alive(self.settings):
                return False
            stop.wait(0.1)  # polling the heartbeat: Redis publishes no event while it is away
        return True

    def ensure_running(self, lang: Lang = "en", not_running: str = NOT_RUNNING) -> None:
        """Before a question: ``SystemNotRunning`` with ``not_running`` when the indexer does not run, or with
        why in ``lang`` when the system runs but cannot serve yet (waited for ``search_timeout`` first)."""
        if not self.wait_running(self.settings.search_timeout):
            raise SystemNotRunning(self.unavailable(lang) or not_running)

    def unavailable(self, lang: Lang = "en") -> str | None:
        """Why the system cannot serve now although it runs (Redis restarting, the indexer starting); None
        when it serves, or when nothing runs (the caller says how to start it)."""
        if self.running() or not supervisor_alive(self.settings):
            return None
        return redis_message(redis_state(self.settings, self.answers()), lang) or STARTING[lang]

    def answers(self) -> bool:
        """Whether Redis answers a ping."""
        try:
            return bool(self.redis.ping())
        except DOWN:
            return False

    def search(self, request: SearchRequest) -> SearchResponse:
        """Search through the indexer process, which owns the embedded store; ``TimeoutError`` past
        ``search_timeout``."""
        result = self._wait(self.queues.run_search(request.model_dump(mode="json")))
        return SearchResponse.model_validate(result)

    def score_sentences(self, query: str, sentences: list[str]) -> list[float]:
        """How close each sentence is to ``query`` in meaning, by the indexer's embedding model."""
        return [float(score) for score in self._wait(self.queues.score_sentences(query, sentences))]

    def similar_notes(self, path: str, threshold: float, limit: int) -> list[tuple[str, float]]:
        """The user notes closest to ``path`` (cosine at least ``threshold``), served by the indexer."""
        return [(other, score) for other, score in self._wait(self.queues.similar_notes(path, threshold, limit))]

    def _wait(self, pending: Any) -> Any:
        try:
            return pending.get(blocking=True, timeout=self.settings.search_timeout)
        except ResultTimeout as exc:  # callers need not know Huey
            raise TimeoutError(f"the indexer did not answer in {self.settings.search_timeout:.0f} s") from exc

    def reindex(self) -> None:
        """Queue a rebuild of the index; raises ``SystemNotRunning`` when Redis cannot be reached."""
        try:
            self.queues.rebuild_index()
        except DOWN as exc:
            raise SystemNotRunning(str(exc)) from exc

    def retry(self, task_id: str) -> TaskRecord:
        """Enqueue a failed task again; ``KeyError`` for an unknown, non-failed or already retried one."""
        return retry(self.history, task_id, {name: getattr(self.queues, name) for name in RETRYABLE})

    def recent_tasks(self, limit: int) -> list[TaskRecord]:
        try:
            return self.history.recent(limit)
        except DOWN:
            return []

    def status(self, lang: Lang = "en", problems: int | None = None, preview: int = 0) -> SystemStatus:
        """Notes, problems (the first ``problems`` of them), rebuild, processes, queues (with their first
        ``preview`` tasks), the generation worker: gathered once for every surface."""
        notes, troubled = _catalog_state(self._catalog(), lang, problems)
        rebuild = read_progress(self.settings.store_path)
        down = SystemStatus(
            running=False,
            notes=notes,
            queues={},
            processes=[],
            problems=troubled,
            rebuild=rebuild,
            extractions=read_extractions(self.settings.extraction_cache_path),
            connectors=connector_views(self.settings),
        )
        try:
            processes = read_processes(self.redis, list(PROCESSES))
            depths = self.queues.depths()
            generation = worker_state(self.redis)
            tasks = [queue_state(name, huey, preview) for name, huey in self.queues.hueys.items()] if preview else []
        except DOWN:  # nothing runs, or the supervisor is restarting its Redis
            state = redis_state(self.settings, answers=False)
            return down.model_copy(update={"running": state is not RedisState.STOPPED, "redis": state})
        status = down.model_copy(
            update={
                "running": any(p.alive for p in processes),
                "queues": depths,
                "processes": processes,
                "generation": generation,
                "queue_tasks": tasks,
                "extraction_backlog": _backlog(self.settings, depths, down.extractions),
            }
        )
        web, watcher = status.process("web"), status.process("watcher")
        status.web_url = web.details.get("url") if web else None
        if depths.get("index", {}).get("pending"):  # the sync's tasks are still queued
            status.sync = sync_progress(self.settings, watcher.details if watcher else None)
        return status


def _backlog(
    settings: Settings, depths: dict[str, dict[str, int]], reading: list[ExtractionProgress]
) -> ExtractionBacklog | None:
    remaining = depths.get("extract", {}).get("pending", 0) + len(reading)
    if not remaining:
        return None
    pace = read_pace(settings.extraction_cache_path)
    return ExtractionBacklog(remaining=remaining, eta_seconds=remaining * pace if pace is not None else None)


def _catalog_state(catalog: Catalog | None, lang: Lang, limit: int | None) -> tuple[dict[str, int], list[NoteProblem]]:
    if catalog is None:
        return {status.value: 0 for status in NoteStatus}, []
    counts = catalog.status_counts()
    problems = note_problems(catalog.troubled_notes(limit=limit), lang=lang)
    return {status.value: counts.get(status, 0) for status in NoteStatus}, problems


def note_counts(settings: Settings) -> dict[str, int]:
    if not settings.catalog_path.exists():
        return _catalog_state(None, "en", 0)[0]
    catalog = Catalog(settings.catalog_path)
    try:
        return _catalog_state(catalog, "en", 0)[0]
    finally:
        catalog.close()
