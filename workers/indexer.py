"""The indexer process: owns the vector store, consumes the ``index`` and ``search`` queues."""

from __future__ import annotations

import contextlib
import gc
import logging
import sys
import threading

from huey.signals import SIGNAL_ERROR

from services.config import Settings, load_settings
from services.indexing.pipeline import IndexPipeline
from services.indexing.rebuild import open_index
from services.indexing.reconcile import changed_paths
from services.lifeline import watch_parent
from services.retrieval.search import CANDIDATE_FIELDS
from services.retrieval.store import StoreClosedError
from services.system.fresh_edits import FreshEdits
from services.system.handlers.indexer import IndexerHandlers
from services.system.note_claims import NoteClaims, release_dead
from services.system.queues import RECONCILE_PRIORITY, Queues
from services.system.store_upkeep import StoreUpkeep
from workers.process import run_until_stopped, setup_logging, start_consumer, stop_on_signals

log = logging.getLogger(__name__)
# How long a thread keeps the GIL while another waits for it (Python's default 5 ms). A search's query embedding
# gives the GIL back at each of its ~400 torch operations and waited up to this long for it each time while the
# indexing thread ran Python (parsing, links, a rebuild, the start-up reconcile): 13 ms alone, 2.8 s beside it;
# at 0.1 ms, 130 ms, and the indexing thread no slower (#34, docs/performance.md).
GIL_SWITCH_SECONDS = 0.0001


def main() -> None:
    settings = load_settings()
    setup_logging(settings, "indexer")
    sys.setswitchinterval(GIL_SWITCH_SECONDS)
    watch_parent()  # gone with the supervisor, even one killed -9
    stop = stop_on_signals()
    queues = Queues(settings)
    pipeline, engine, configured, rebuild = open_index(
        settings, on_indexed=queues.enqueue_entities, extract_later=queues.enqueue_extraction
    )
    engine.warm()  # the first chat question pays no fact's embedding, the first English one no axis
    # The model and libraries are loaded for good: out of the collector's sight, they no longer make
    # every full collection walk their objects (searches: -2 to -5 ms at p95, bench/search_latency.py).
    gc.collect()
    gc.freeze()
    pipeline.run_id = pipeline.catalog.start_run("indexer")
    pipeline.between_batches = FreshEdits(queues.index, settings).run  # a note saved meanwhile cuts in
    release_dead(queues.index.storage.conn)  # a killed indexer's leases: free at once, not when they lapse
    claims = NoteClaims(queues.index.storage.conn)  # several indexers on one Redis never sync one note at once
    handlers = IndexerHandlers(pipeline, engine, queues, configured, rebuild, claims)
    queues.index.signal(SIGNAL_ERROR)(handlers.mark_final_failure)
    queues.serve(handlers, "index")
    pipeline.store.keep_candidate_fields(CANDIDATE_FIELDS)  # read after the start, or before a first write

    consumers = [
        start_consumer(queues.search, settings.search_workers),
        start_consumer(queues.index, 1),  # one writer: the store and catalog see one note at a time
    ]
    log.info("indexer ready: %d notes in the catalog", pipeline.catalog.note_count())
    # Serving from here: the rest of the start-up waits for no one (at 20,000 notes it took seconds of the
    # processor while every other process was starting too, #34).
    threading.Thread(target=_after_start, args=(settings, pipeline, queues), name="after-start", daemon=True).start()
    upkeep = StoreUpkeep(
        pipeline.store,
        queues.index.pending_count,
        settings.store_optimize_after_points,
        settings.store_optimize_busy_points,
    )
    threading.Thread(target=upkeep.run, args=(stop,), name="store-upkeep", daemon=True).start()
    try:
        run_until_stopped(settings, "indexer", stop, consumers, details=lambda: {"run_id": pipeline.run_id})
    finally:
        pipeline.catalog.finish_run(pipeline.run_id)
        pipeline.store.close()


def _after_start(settings: Settings, pipeline: IndexPipeline, queues: Queues) -> None:
    # A previous indexer killed mid-task lost what it had dequeued: the reconcile finds it again.
    missed = changed_paths(settings, pipeline.catalog)
    queues.enqueue_paths(missed, settings.index_batch_notes, RECONCILE_PRIORITY)
    if missed:
        log.info("%d notes to sync since the last indexer", len(missed))
    # Candidates' fields from memory once read (searches meanwhile read them from the store, as before).
    with contextlib.suppress(StoreClosedError):  # the indexer stopped before the read was done
        pipeline.store.read_candidate_fields()
        gc.freeze()  # the map lives as long as the process: out of the collector's sight, like the model
    # Edge dropped the shard's pages at its last close: read them back before users' first searches do.
    pipeline.store.keep_warm()


if __name__ == "__main__":
    main()
