"""The Huey queues of one installation (one PriorityRedisHuey per queue) and the tasks they carry.

Every process builds ``Queues(settings)`` to enqueue; the process that owns a kind of work binds its
handlers (``services.system.handlers``, which implement the ``*Tasks`` protocols below) with ``serve``
before starting its consumer. A task body run in
a process that bound no handler for it raises, naming the process that should run it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

import redis
from huey import PriorityRedisHuey, crontab
from huey.signals import SIGNAL_COMPLETE, SIGNAL_ERROR

from services.config import Settings
from services.llm.models import Priority
from services.system.history import TaskHistory, outcome_recorder, task_name


class IndexerTasks(Protocol):
    """What the indexer process serves (``services.system.handlers.indexer``)."""

    kind: Literal["indexer"]

    def sync_batch(self, paths: list[str]) -> dict[str, Any]: ...
    def sync_note(self, path: str) -> dict[str, Any]: ...
    def rebuild_index(self) -> int: ...
    def rebuild_step(self) -> dict[str, Any] | None: ...
    def search(self, request: dict[str, Any]) -> dict[str, Any]: ...
    def apply_entities(self, path: str) -> int: ...
    def similar_notes(self, path: str, threshold: float, limit: int) -> list[list[Any]]: ...
    def score_sentences(self, query: str, sentences: list[str]) -> list[float]: ...


class NerTasks(Protocol):
    kind: Literal["ner"]

    def extract_entities(self, path: str) -> str: ...


class LearnerTasks(Protocol):
    kind: Literal["learner"]

    def learn_tick(self) -> dict[str, Any]: ...


class ExtractorTasks(Protocol):
    """What the extract worker serves (``services.system.handlers.extractor``)."""

    kind: Literal["extractor"]

    def extract_document(self, path: str) -> str: ...


class ConnectorTasks(Protocol):
    """What the extractor process also serves for connected mail and calendars (``services.system.connectors``)."""

    kind: Literal["connectors"]

    def sync_connector(self, connector_id: str) -> dict[str, Any]: ...
    def connect_tick(self) -> dict[str, Any]: ...


class GenerationTasks(Protocol):
    kind: Literal["generation"]

    def generate(self, request: dict[str, Any]) -> None: ...


QUEUE_NAMES = ("index", "search", "enrich", "learn", "generate", "extract", "connect")
FRENCH_QUEUE_NAMES = {  # as the dashboard and the French CLI name them (``mcp``: the MCP calls' history)
    "index": "indexation",
    "search": "recherche",
    "enrich": "enrichissement",
    "learn": "apprentissage",
    "generate": "génération",
    "mcp": "clients MCP",
    "extract": "extraction des documents",
    "connect": "sources connectées",
}
# The queues whose tasks' return values a caller waits for. Every other queue kept its tasks' values in a Redis
# hash that nothing read or emptied: 146,000 of them (44 MB) after a few runs at 50,000 notes, in Redis's
# memory and replayed from its append-only file at each start (#34).
READ_RESULTS = frozenset({"search", "connect"})
EVENT_PRIORITY = 10  # a user's edit goes before the bulk of a reconcile
RECONCILE_PRIORITY = 0


@dataclass
class Bindings:
    """The handlers this process serves (at most one object per kind of process)."""

    indexer: IndexerTasks | None = None
    ner: NerTasks | None = None
    learner: LearnerTasks | None = None
    generation: GenerationTasks | None = None
    extractor: ExtractorTasks | None = None
    connectors: ConnectorTasks | None = None


class Queues:
    """The Huey instances of one ObsiRAG installation and the task handles bound to them."""

    def __init__(self, settings: Settings) -> None:
        url = settings.effective_redis_url
        self.hueys = {name: make_huey(name, url, results=name in READ_RESULTS) for name in QUEUE_NAMES}
        self.bound = Bindings()
        retry = {"retries": settings.index_retries, "retry_delay": settings.index_retry_delay}
        index, search, enrich = self.index, self.search, self.hueys["enrich"]
        self.sync_batch = index.task(name="sync_batch")(lambda paths: self._indexer().sync_batch(paths))
        self.sync_note = index.task(name="sync_note", retry_backoff=2, **retry)(
            lambda path: self._indexer().sync_note(path)
        )
        self.rebuild_index = index.task(name="rebuild_index", priority=EVENT_PRIORITY + 10)(
            lambda: self._indexer().rebuild_index()
        )
        self.rebuild_step = index.task(name="rebuild_step", priority=RECONCILE_PRIORITY - 1)(
            lambda: self._indexer().rebuild_step()
        )
        self.apply_entities = index.task(name="apply_entities", priority=EVENT_PRIORITY)(
            lambda path: self._indexer().apply_entities(path)
        )
        self.run_search = search.task(name="run_search", expires=30)(lambda request: self._indexer().search(request))
        self.similar_notes = search.task(name="similar_notes", expires=60)(
            lambda path, threshold, limit: self._indexer().similar_notes(path, threshold, limit)
        )
        self.score_sentences = search.task(name="score_sentences", expires=30)(
            lambda query, sentences: self._indexer().score_sentences(query, sentences)
        )
        self.extract_entities = enrich.task(name="extract_entities", **retry)(
            lambda path: self._ner().extract_entities(path)
        )
        self.learn_tick = self.hueys["learn"].periodic_task(crontab(), name="learn_tick", expires=120)(
            lambda: self._learner().learn_tick()
        )
        self.generate = self.hueys["generate"].task(name="generate", retries=0)(
            lambda request: self._generation().generate(request)
        )
        # Its own queue and process: a 300-page scan never holds up the indexing of a note saved meanwhile.
        self.extract_document = self.hueys["extract"].task(name="extract_document", **retry)(
            lambda path: self._extractor().extract_document(path)
        )
        # Mail and calendars: their own queue, so a slow or silent server never holds up a document's reading.
        connect = self.hueys["connect"]
        self.sync_connector = connect.task(name="sync_connector", retries=0)(
            lambda connector_id: self._connectors().sync_connector(connector_id)
        )
        self.connect_tick = connect.periodic_task(crontab(), name="connect_tick", expires=120)(
            lambda: self._connectors().connect_tick()
        )

    @property
    def index(self) -> PriorityRedisHuey:
        return self.hueys["index"]

    @property
    def search(self) -> PriorityRedisHuey:
        return self.hueys["search"]

    def serve(
        self,
        handlers: IndexerTasks | NerTasks | LearnerTasks | GenerationTasks | ExtractorTasks | ConnectorTasks,
        *queues: str,
    ) -> None:
        """Bind ``handlers`` to their tasks in this process; ``queues``: record their outcomes in the history."""
        setattr(self.bound, handlers.kind, handlers)
        for name in queues:
            record_task_outcomes(self.hueys[name], name)

    def _indexer(self) -> IndexerTasks:
        return _required(self.bound.indexer, "index and search tasks run only in the indexer process")

    def _ner(self) -> NerTasks:
        return _required(self.bound.ner, "enrich tasks run only in the ner process")

    def _learner(self) -> LearnerTasks:
        return _required(self.bound.learner, "learn tasks run only in the learner process")

    def _generation(self) -> GenerationTasks:
        return _required(self.bound.generation, "generate tasks run only in the mlx worker process")

    def _extractor(self) -> ExtractorTasks:
        return _required(self.bound.extractor, "extract tasks run only in the extractor process")

    def _connectors(self) -> ConnectorTasks:
        return _required(self.bound.connectors, "connect tasks run only in the extractor process")

    def enqueue_paths(self, paths: list[str], batch: int, priority: int) -> int:
        """Enqueue ``paths`` in batches; returns how many tasks were enqueued."""
        chunks = [paths[i : i + batch] for i in range(0, len(paths), batch)]
        for chunk in chunks:
            self.sync_batch(chunk, priority=priority)
        return len(chunks)

    def enqueue_entities(self, paths: list[str], unless_queued: bool = False) -> int:
        """Queue NER for notes just indexed (generated notes are ignored by the task itself); returns how many.

        ``unless_queued``: not for a note whose task already waits (NER's start, which reads the whole queue:
        a restart while NER lagged behind queued every waiting note again, 29,621 tasks for 9,747 notes)."""
        if unless_queued:
            waiting = self.queued_args("enrich", "extract_entities")
            paths = [path for path in paths if (path,) not in waiting]
        for path in paths:
            self.extract_entities(path)
        return len(paths)

    def queued_args(self, queue: str, task: str) -> set[tuple[Any, ...]]:
        """The arguments of the ``task`` tasks waiting in ``queue`` (not those scheduled for a retry)."""
        huey = self.hueys[queue]
        messages = (huey.serializer.deserialize(raw) for raw in huey.storage.enqueued_items())
        return {tuple(m.args or ()) for m in messages if task_name(m) == task}

    def enqueue_extraction(self, path: str) -> None:
        """Queue a document whose text is not in the extraction cache (the indexer's ``extract_later``)."""
        self.extract_document(path)

    def drop_unread_results(self, client: redis.Redis | None = None) -> int:
        """Delete the values an earlier version kept for the queues whose results nobody reads; how many.
        ``client``: the connection to do it on (the supervisor's, which gives up at once on a Redis away)."""
        conn = client or self.index.storage.conn
        keys = [self.hueys[name].storage.result_key for name in QUEUE_NAMES if name not in READ_RESULTS]
        dropped = sum(int(conn.hlen(key)) for key in keys)
        conn.unlink(*keys)  # freed off Redis's main thread
        return dropped

    def depths(self) -> dict[str, dict[str, int]]:
        return {
            name: {"pending": huey.pending_count(), "scheduled": huey.scheduled_count()}
            for name, huey in self.hueys.items()
        }

    def waiting_chats(self) -> WaitingChats:
        return WaitingChats(self.hueys["generate"])

    def redis_run_id(self) -> str:
        """The id of the Redis server's current run: a new one means Redis restarted (and may have lost the
        last writes of its append-only file)."""
        return str(self.index.storage.conn.info("server")["run_id"])


def _required(handlers: Any, problem: str) -> Any:
    if handlers is None:
        raise RuntimeError(problem)
    return handlers


class WaitingChats:
    """The chat requests waiting in the generate queue, which a learner generation lets cut in.

    Reads Huey's sorted set directly (scores are negated priorities): Huey has no "peek" call."""

    def __init__(self, huey: PriorityRedisHuey) -> None:
        self.huey = huey

    def depth(self) -> int:
        return self.huey.pending_count()

    def waiting(self) -> bool:
        """Whether the next task of the generate queue is a chat."""
        top = self.huey.storage.conn.zrange(self.huey.storage.queue_key, 0, 0, withscores=True)
        return bool(top) and -top[0][1] >= Priority.CHAT

    def run(self) -> None:
        """Run the waiting chat generations here and now (between two tokens of a learner generation)."""
        while self.waiting():
            task = self.huey.dequeue()
            if task is None:
                return
            if (task.priority or 0) < Priority.CHAT:  # another consumer took the chat first: put this one back
                self.huey.enqueue(task)
                return
            self.huey.execute(task)


def record_task_outcomes(huey: PriorityRedisHuey, queue: str) -> None:
    """Keep the dashboard's task history for the tasks this process runs from ``huey``."""
    huey.signal(SIGNAL_COMPLETE, SIGNAL_ERROR)(outcome_recorder(TaskHistory(huey.storage.conn), queue))


def make_huey(name: str, url: str, results: bool = True) -> PriorityRedisHuey:
    return PriorityRedisHuey(
        f"obsirag-{name}",
        results=results,
        # redis-py 8 reads with a 5 s timeout by default: a result waited for longer (a search given
        # ``search_timeout``, a connector's sync) failed at 5 s as if the indexer had not answered (#34).
        connection_pool=redis.ConnectionPool.from_url(url, socket_timeout=None),
        utc=True,
        # Push-based result waits (6 ms vs 55 ms polling), and get() must not raise while retries remain.
        notify_result=True,
        store_intermediate_errors=False,
    )
