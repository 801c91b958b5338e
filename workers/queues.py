"""Huey queues (one PriorityRedisHuey per queue) and the tasks they carry.

Producers (watcher, CLI, web) call the task functions to enqueue; consumers (indexer, …) bind the
services the task bodies need with ``bind_pipeline`` before starting their consumer.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from huey import PriorityRedisHuey

from services.config import Settings
from services.llm.models import GenerationRequest, Priority

if TYPE_CHECKING:
    from services.catalog import Catalog
    from services.embedding import Embedder
    from services.entities import EntityExtractor
    from services.indexing import IndexPipeline
    from services.learner.cycle import Learner
    from services.llm.generation import GenerationService
    from services.rebuild import Rebuild
    from services.search import SearchEngine

log = logging.getLogger(__name__)
QUEUE_NAMES = ("index", "search", "enrich", "learn", "generate")
EVENT_PRIORITY = 10  # a user's edit goes before the bulk of a reconcile
RECONCILE_PRIORITY = 0


@dataclass
class _Bound:
    pipeline: IndexPipeline | None = None
    search: SearchEngine | None = None
    queues: Queues | None = None
    generation: GenerationService | None = None
    configured: Embedder | None = None  # the configured model, when the live index was built with another
    rebuild: Rebuild | None = None


_bound = _Bound()


def bind_pipeline(
    pipeline: IndexPipeline,
    search: SearchEngine,
    queues: Queues,
    configured: Embedder | None = None,
    rebuild: Rebuild | None = None,
) -> None:
    """Called once by the process that owns the store, before its consumers start.

    ``configured``: the configured model when the live index was built with another; ``rebuild``: the
    rebuild to carry on (queued here)."""
    _bound.pipeline = pipeline
    _bound.search = search
    _bound.queues = queues
    _bound.configured = configured or pipeline.embedder
    pipeline.on_indexed = queues.enqueue_entities  # NER follows every indexed note
    if rebuild is not None:
        _bound.rebuild = rebuild
        rebuild.engine = search
        queues.rebuild_step()


def bind_generation(service: GenerationService, queues: Queues) -> None:
    """Called once by the mlx worker before its consumer starts: the service learns to let chats cut in."""
    huey = queues.hueys["generate"]
    service.preempt = lambda: run_waiting_chats(huey)
    service.queue_depth = huey.pending_count
    _bound.generation = service


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
    if report.indexed or report.skipped or report.failed or report.deleted:  # an unchanged batch says nothing
        log.info(
            "batch: %d indexed (%d chunks), %d skipped, %d failed, %d removed, %d unchanged",
            len(report.indexed), report.chunks_embedded, len(report.skipped), len(report.failed),
            len(report.deleted), len(report.unchanged),
        )  # fmt: skip
    if _bound.queues is not None:
        for path in report.failed:
            _bound.queues.sync_note(path, priority=RECONCILE_PRIORITY)
    return report.model_dump()


def sync_note(path: str) -> dict[str, Any]:
    """One note; raises on failure so that Huey retries it with backoff."""
    return _pipeline().sync_paths([path], raise_errors=True).model_dump()


def rebuild_index() -> int:
    """Rebuild the index with the configured model beside the live one (Edge), which keeps answering;
    a Qdrant server's collection is emptied and refilled. Returns the notes to index."""
    from services import vault
    from services.rebuild import Rebuild
    from services.store import EdgeStore

    pipeline = _pipeline()
    if isinstance(pipeline.store, EdgeStore):
        if _bound.rebuild is None:
            _bound.rebuild = Rebuild.start(pipeline.settings, pipeline, _bound.configured or pipeline.embedder)
            _bound.rebuild.engine = _bound.search
            if _bound.queues is not None:
                _bound.queues.rebuild_step()
        return _bound.rebuild.progress().total
    pipeline.rebuild()
    paths = list(vault.iter_vault_paths(pipeline.settings.vault, pipeline.settings.exclude, outside_links=True))
    if _bound.queues is not None:
        _bound.queues.enqueue_paths(paths, pipeline.settings.index_batch_notes, RECONCILE_PRIORITY)
    return len(paths)


def rebuild_step() -> dict[str, Any] | None:
    """A batch of the rebuild under way, then the next step behind the users' edits (or the switch)."""
    rebuild = _bound.rebuild
    if rebuild is None:
        return None
    if rebuild.step(rebuild.settings.index_batch_notes):
        _bound.rebuild = None
    elif _bound.queues is not None:
        _bound.queues.rebuild_step()
    return rebuild.progress().model_dump()


def run_search(request: dict[str, Any]) -> dict[str, Any]:
    from services.search import SearchRequest

    return _engine().search(SearchRequest.model_validate(request)).model_dump(mode="json")


def run_generation(request: dict[str, Any]) -> None:
    """Stream one generation into its Redis stream; returns nothing (Huey stores no result for None)."""
    if _bound.generation is None:
        raise RuntimeError("generate tasks run only in the mlx worker process")
    _bound.generation.run(GenerationRequest.model_validate(request))


def chat_waiting(huey: PriorityRedisHuey) -> bool:
    """Whether the next task of the generate queue is a chat (scores are negated priorities)."""
    top = huey.storage.conn.zrange(huey.storage.queue_key, 0, 0, withscores=True)
    return bool(top) and -top[0][1] >= Priority.CHAT


def run_waiting_chats(huey: PriorityRedisHuey) -> None:
    """Run the waiting chat generations here and now (between two tokens of a learner generation)."""
    while chat_waiting(huey):
        task = huey.dequeue()
        if task is None:
            return
        if (task.priority or 0) < Priority.CHAT:  # another consumer took the chat first: put this one back
            huey.enqueue(task)
            return
        huey.execute(task)


# --- enrichment: NER (enrich queue), entity payloads and similar notes (indexer), learner (learn queue) ---


@dataclass
class _Enrichment:
    settings: Settings | None = None
    catalog: Catalog | None = None
    extractor: EntityExtractor | None = None
    learner: Learner | None = None
    queues: Queues | None = None


_enrichment = _Enrichment()


def bind_ner(settings: Settings, catalog: Catalog, extractor: EntityExtractor, queues: Queues) -> None:
    """Called once by the NER worker before its consumer starts."""
    _enrichment.settings, _enrichment.catalog, _enrichment.extractor = settings, catalog, extractor
    _enrichment.queues = queues


def bind_learner(learner: Learner, queues: Queues) -> None:
    """Called once by the learner process before its (periodic) consumer starts."""
    _enrichment.learner, _enrichment.queues = learner, queues


def extract_entities(path: str) -> str:
    """NER for one note; when its entities changed, the indexer copies them into the note's chunks."""
    from datetime import UTC, datetime

    from services.entities import enrich_note

    e = _enrichment
    if e.extractor is None or e.catalog is None or e.settings is None:
        raise RuntimeError("enrich tasks run only in the ner process")
    outcome = enrich_note(e.settings, e.catalog, e.extractor, path, datetime.now(UTC))
    if outcome == "updated" and e.queues is not None:
        e.queues.apply_entities(path)
    return outcome


def apply_entities(path: str) -> int:
    """Set the note's ``entities`` payload from the catalog (the indexer owns the store)."""
    from services.entities import payload_names

    pipeline = _pipeline()
    names = payload_names(pipeline.catalog.note_entities(path))
    pipeline.store.set_note_payload(path, {"entities": names})
    return len(names)


def similar_notes(path: str, threshold: float, limit: int) -> list[list[Any]]:
    """[[path, cosine], …] of the user notes closest to ``path`` (served by the indexer, which owns the vectors)."""
    from services.learner.similarity import similar_notes as closest

    return [[other, score] for other, score in closest(_pipeline().store, path, threshold, limit)]


def learn_tick() -> dict[str, Any]:
    """The learner's periodic task: the weekly synthesis if its slot passed, then a cycle if one is due."""
    from datetime import datetime

    from services.learner.cycle import LearnerBusy
    from services.learner.schedule import learner_enabled

    if _enrichment.learner is None:
        raise RuntimeError("learn tasks run only in the learner process")
    if not learner_enabled(_enrichment.learner.settings):
        return {"enabled": False}
    now = datetime.now().astimezone()
    try:
        synthesis = _enrichment.learner.synthesis_if_due(now)
        report = _enrichment.learner.run_if_due(now)
    except LearnerBusy:
        return {"busy": True}
    return {"synthesis": synthesis, "cycle": report.counters() if report else None}


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
        self.rebuild_step = index.task(name="rebuild_step", priority=RECONCILE_PRIORITY - 1)(rebuild_step)
        self.run_search = self.hueys["search"].task(name="run_search", expires=30)(run_search)
        self.generate = self.hueys["generate"].task(name="generate", retries=0)(run_generation)
        self._register_enrichment(settings)

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

    def _register_enrichment(self, settings: Settings) -> None:
        from huey import crontab

        enrich, learn = self.hueys["enrich"], self.hueys["learn"]
        retry = {"retries": settings.index_retries, "retry_delay": settings.index_retry_delay}
        self.extract_entities = enrich.task(name="extract_entities", **retry)(extract_entities)
        self.apply_entities = self.index.task(name="apply_entities", priority=EVENT_PRIORITY)(apply_entities)
        self.similar_notes = self.search.task(name="similar_notes", expires=60)(similar_notes)
        self.learn_tick = learn.periodic_task(crontab(), name="learn_tick", expires=120)(learn_tick)

    def enqueue_entities(self, paths: list[str]) -> None:
        """Queue NER for notes just indexed (generated notes are ignored by the task itself)."""
        for path in paths:
            self.extract_entities(path)

    def depths(self) -> dict[str, dict[str, int]]:
        return {
            name: {"pending": huey.pending_count(), "scheduled": huey.scheduled_count()}
            for name, huey in self.hueys.items()
        }


def record_task_outcomes(huey: PriorityRedisHuey, queue: str) -> None:
    """Keep the dashboard's task history (``services.tasks``) for the tasks this process runs from ``huey``."""
    from huey.signals import SIGNAL_COMPLETE, SIGNAL_ERROR

    from services.tasks import TaskHistory, outcome_recorder

    huey.signal(SIGNAL_COMPLETE, SIGNAL_ERROR)(outcome_recorder(TaskHistory(huey.storage.conn), queue))


def _make_huey(name: str, url: str) -> PriorityRedisHuey:
    return PriorityRedisHuey(
        f"obsirag-{name}",
        url=url,
        utc=True,
        # Push-based result waits (6 ms vs 55 ms polling), and get() must not raise while retries remain.
        notify_result=True,
        store_intermediate_errors=False,
    )
