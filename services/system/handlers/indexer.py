"""The indexer's task bodies (``index`` and ``search`` queues)."""

from __future__ import annotations

import logging
from typing import Any, Literal

from services.indexing.entities import payload_names
from services.indexing.pipeline import IndexPipeline
from services.indexing.rebuild import Rebuild, chosen_embedder
from services.indexing.report import IndexReport
from services.retrieval.embedding import Embedder
from services.retrieval.learned import LearnedMarks
from services.retrieval.search import SearchEngine, SearchRequest
from services.retrieval.sentence_scores import sentence_scores
from services.retrieval.similar import similar_notes as closest
from services.system import heap
from services.system.note_claims import NoteClaims
from services.system.queues import EVENT_PRIORITY, RECONCILE_PRIORITY, Queues

log = logging.getLogger(__name__)

CLAIM_RETRY_SECONDS = 1.0  # a note another indexer holds is tried again this much later
GRAPHS_LOOK_SECONDS = 2.0  # between two looks at a rebuild's graphs being built (minutes at 50,000 notes)


class IndexerHandlers:
    """The indexer's tasks (``index`` and ``search`` queues): it owns the store, the catalog's writes, the vectors."""

    kind: Literal["indexer"] = "indexer"

    def __init__(
        self,
        pipeline: IndexPipeline,
        search: SearchEngine,
        queues: Queues,
        configured: Embedder | None = None,
        rebuild: Rebuild | None = None,
        claims: NoteClaims | None = None,
    ) -> None:
        """``configured``: the configured model when the live index was built with another; ``rebuild``: the
        rebuild to carry on (its next step is queued here). The pipeline was opened with
        ``on_indexed=queues.enqueue_entities``: NER follows every indexed note. ``claims``: the per-note leases
        that let several indexers share one Redis (``services.system.note_claims``)."""
        self.pipeline = pipeline
        self.engine = search
        if search.marks is None:  # the running search learns from this vault's recorded clicks
            search.marks = LearnedMarks(pipeline.catalog.marks)
        self.queues = queues
        self.configured = configured or pipeline.embedder
        self.rebuild = rebuild
        self.claims = claims
        self.trims = 0  # memory given back (``_after_big``)
        self.embedded_since_trim = 0
        if rebuild is not None:
            queues.rebuild_step()

    def sync_batch(self, paths: list[str]) -> dict[str, Any]:
        """Bring a batch of notes in line with the disk; notes that fail are retried one by one."""
        report = self._claimed(paths, raise_errors=False)
        if report.changed():  # an unchanged batch says nothing
            log.info("batch: %s", report.line())
        for path in report.failed:
            self.queues.sync_note(path, priority=RECONCILE_PRIORITY)
        self._after_big(report)
        return report.model_dump()

    def sync_note(self, path: str) -> dict[str, Any]:
        """One note; raises on failure so that Huey retries it with backoff."""
        report = self._claimed([path], raise_errors=True)
        if report.changed():  # a document the extractor handed over is said like a batch
            log.info("note: %s", report.line())
        self._after_big(report)
        return report.model_dump()

    def _claimed(self, paths: list[str], raise_errors: bool) -> IndexReport:
        """``sync_paths`` on the notes no other indexer is syncing now; the others go back to the queue for a
        moment later (their holder done, they are found unchanged or synced again)."""
        if self.claims is None:
            return self.pipeline.sync_paths(paths, raise_errors=raise_errors)
        mine, theirs = self.claims.claim(list(dict.fromkeys(paths)))
        try:
            report = self.pipeline.sync_paths(mine, raise_errors=raise_errors)
        finally:
            self.claims.release(mine)
        if theirs:
            log.info("held by another indexer, again in %.0f s: %s", CLAIM_RETRY_SECONDS, ", ".join(theirs))
            self.queues.sync_batch.schedule(args=(theirs,), delay=CLAIM_RETRY_SECONDS, priority=EVENT_PRIORITY)
        return report

    def _after_big(self, report: IndexReport) -> None:
        """Every ``TRIM_AFTER_CHUNKS`` chunks embedded, in one big sync or over many small ones (a first index of
        thousands of notes in batches of a few: its indexer grew from 1.25 to 2.9 GB at 5,000 notes, #34), the
        freed memory back to the system (#41.5)."""
        self.embedded_since_trim += report.chunks_embedded
        if self.embedded_since_trim >= heap.TRIM_AFTER_CHUNKS:
            self.embedded_since_trim = 0
            if heap.give_back():
                self.trims += 1

    def rebuild_index(self) -> int:
        """Rebuild the index with the configured model (as chosen now) beside the live one (an Edge folder or a second
        server collection), which keeps answering. Returns the notes to index."""
        if self.rebuild is None:
            self.configured = chosen_embedder(self.pipeline.settings, self.configured)  # `obsirag model use`
            self.rebuild = Rebuild.start(self.pipeline.settings, self.pipeline, self.configured, self.engine)
            self.queues.rebuild_step()
        return self.rebuild.progress().total

    def rebuild_step(self) -> dict[str, Any] | None:
        """A batch of the rebuild under way, then the next step behind the users' edits (or the switch)."""
        rebuild = self.rebuild
        if rebuild is None:
            return None
        if rebuild.step(rebuild.settings.index_batch_notes):
            self.rebuild = None
        elif rebuild.building:  # its search graphs are built in a child process: a look now and then
            self.queues.rebuild_step.schedule(delay=GRAPHS_LOOK_SECONDS)
        else:
            self.queues.rebuild_step()
        return rebuild.progress().model_dump()

    def search(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.engine.search(SearchRequest.model_validate(request)).model_dump(mode="json")

    def score_sentences(self, query: str, sentences: list[str]) -> list[float]:
        """The cosine of ``query`` with each sentence (the chat's quoted answers), by the live index's model."""
        return sentence_scores(self.engine.embedder, query, sentences, self.pipeline.cache)

    def apply_entities(self, path: str) -> int:
        """Set the note's ``entities`` payload from the catalog (the indexer owns the store)."""
        names = payload_names(self.pipeline.catalog.note_entities(path))
        self.pipeline.store.set_note_payload(path, {"entities": names})
        return len(names)

    def similar_notes(self, path: str, threshold: float, limit: int) -> list[list[Any]]:
        """[[path, cosine], …] of the user notes closest to ``path`` (the indexer owns the vectors)."""
        return [[other, score] for other, score in closest(self.pipeline.store, path, threshold, limit)]

    def mark_final_failure(self, signal: str, task: Any, exc: Exception | None = None) -> None:
        """A Huey ``SIGNAL_ERROR`` receiver: only the last attempt (no retries left) marks the note failed."""
        if task.name == "sync_note" and task.retries == 0:
            self.pipeline.mark_failed(task.args[0], f"{type(exc).__name__}: {exc}")
