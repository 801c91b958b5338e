"""How the CLI (and later the web app) talk to a running ObsiRAG: search, status, reindex."""

from __future__ import annotations

from functools import cached_property

import redis
from pydantic import BaseModel, Field

from services.catalog import Catalog
from services.config import Settings
from services.llm.client import worker_state
from services.llm.models import WorkerState
from services.models import NoteStatus
from services.problems import NoteProblem, note_problems
from services.processes import ProcessState, read_process, read_processes
from services.rebuild import RebuildProgress, read_progress
from services.search import SearchRequest, SearchResponse
from workers.queues import Queues
from workers.supervisor import WORKERS


class SystemStatus(BaseModel):
    running: bool
    notes: dict[str, int]
    queues: dict[str, dict[str, int]]
    processes: list[ProcessState]
    generation: WorkerState | None = None  # the mlx worker's published state, when it runs
    rebuild: RebuildProgress | None = None  # an index rebuild beside the live one, under way
    problems: list[NoteProblem] = Field(default_factory=list)  # skipped, failed, indexed with a warning
    web_url: str | None = None  # where the web UI listens (a free port when the configured one was busy)


class SystemClient:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @cached_property
    def redis(self) -> redis.Redis:
        return redis.Redis.from_url(self.settings.effective_redis_url, socket_connect_timeout=1)

    @cached_property
    def queues(self) -> Queues:
        return Queues(self.settings)

    def indexer_alive(self) -> bool:
        try:
            return read_process(self.redis, "indexer") is not None
        except (redis.ConnectionError, FileNotFoundError):
            return False

    def search(self, request: SearchRequest) -> SearchResponse:
        """Search through the indexer process, which owns the embedded store."""
        result = self.queues.run_search(request.model_dump(mode="json"))
        return SearchResponse.model_validate(result.get(blocking=True, timeout=self.settings.search_timeout))

    def reindex(self) -> None:
        self.queues.rebuild_index()

    def status(self) -> SystemStatus:
        notes, problems = note_counts(self.settings), troubled_notes(self.settings)
        rebuild = None if self.settings.qdrant_url else read_progress(self.settings.store_path)
        try:
            processes = read_processes(self.redis, ["supervisor", *WORKERS])
            depths = self.queues.depths()
            generation = worker_state(self.redis)
        except (redis.ConnectionError, FileNotFoundError):
            return SystemStatus(running=False, notes=notes, queues={}, processes=[], problems=problems, rebuild=rebuild)
        running = any(p.alive for p in processes)
        web = next((p for p in processes if p.name == "web" and p.alive), None)
        return SystemStatus(
            running=running, notes=notes, queues=depths, processes=processes, generation=generation,
            problems=problems, web_url=web.details.get("url") if web else None, rebuild=rebuild,
        )  # fmt: skip


def troubled_notes(settings: Settings) -> list[NoteProblem]:
    if not settings.catalog_path.exists():
        return []
    catalog = Catalog(settings.catalog_path)
    try:
        return note_problems(catalog.troubled_notes(), lang="en")
    finally:
        catalog.close()


def note_counts(settings: Settings) -> dict[str, int]:
    if not settings.catalog_path.exists():
        return {status.value: 0 for status in NoteStatus}
    catalog = Catalog(settings.catalog_path)
    try:
        counts = catalog.status_counts()
    finally:
        catalog.close()
    return {status.value: counts.get(status, 0) for status in NoteStatus}
