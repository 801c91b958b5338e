"""A small note saved while the indexer embeds a big one is indexed between the big one's encode batches,
not after it (issue #41.4), and between a batch's big notes when their texts come from the cache (#34);
documents, big notes, the paths under way and the reconcile's batches wait."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.config import Settings
from services.indexing import pipeline as pipeline_module
from services.indexing.chunking import PAUSE_PAGES, chunk_pages
from services.indexing.pipeline import IndexPipeline
from services.retrieval.search import SearchEngine
from services.retrieval.store import EdgeStore
from services.system import heap
from services.system.fresh_edits import SMALL_NOTE_BYTES, FreshEdits
from services.system.handlers.indexer import IndexerHandlers
from services.system.queues import EVENT_PRIORITY, RECONCILE_PRIORITY, Queues


@pytest.fixture
def handlers(tmp_path: Path, redis_url: str, embedder) -> Iterator[IndexerHandlers]:
    vault = tmp_path / "vault"
    vault.mkdir()
    # Enough sections for several encode batches of the model (chunks of ~40 tokens: quick to embed).
    sections = (f"## Partie {i}\n\nLe relevé {i} note une dépense de {i * 3} euros au marché." for i in range(90))
    (vault / "Gros.md").write_text("# Gros\n\n" + "\n\n".join(sections) + "\n", encoding="utf-8")
    (vault / "Petite.md").write_text("# Petite\n\nLe chat de Marcel dort sur le radiateur.\n", encoding="utf-8")
    (vault / "Reconcile.md").write_text("# Reconcile\n\nUne note que la réconciliation retrouve.\n", encoding="utf-8")
    (vault / "Long.md").write_text("# Long\n\n" + "mot " * (SMALL_NOTE_BYTES // 4 + 1), encoding="utf-8")
    (vault / "Scan.pdf").write_bytes(b"%PDF-1.4 not read here")
    settings = Settings(vault=vault, data_dir=tmp_path / "data", redis_url=redis_url, chunk_tokens=40)
    pipeline = IndexPipeline(settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), embedder)
    queues = Queues(settings)
    for huey in queues.hueys.values():
        huey.flush()
    pipeline.between_batches = FreshEdits(queues.index, settings).run  # as workers/indexer.py wires it
    handlers = IndexerHandlers(pipeline, SearchEngine(pipeline.store, embedder), queues)
    queues.serve(handlers)  # what cuts in runs here, in the indexer, as in the running system
    yield handlers
    for huey in queues.hueys.values():
        huey.flush()
    pipeline.store.close()
    pipeline.catalog.close()


def test_a_small_note_saved_meanwhile_is_indexed_between_the_big_notes_batches(
    handlers: IndexerHandlers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(heap, "TRIM_AFTER_CHUNKS", 50)  # this note's size counts as big here
    queues, catalog = handlers.queues, handlers.pipeline.catalog
    queues.sync_batch(["Petite.md"], priority=EVENT_PRIORITY)  # the watcher's batch for the small note
    waiting = [
        queues.sync_batch(["Gros.md"], priority=EVENT_PRIORITY),  # the note under way: written last, would be lost
        queues.sync_note("Scan.pdf", priority=EVENT_PRIORITY),  # a document: its pages may be thousands
        queues.sync_batch(["Long.md"], priority=EVENT_PRIORITY),  # a big note: waits its turn
        queues.sync_batch(["Reconcile.md"], priority=RECONCILE_PRIORITY),  # the reconcile's bulk: after
    ]

    report = handlers.sync_batch(["Gros.md"])  # the big sync, as the consumer runs it

    assert report["indexed"] == ["Gros.md"]
    big, small = catalog.get_note("Gros.md"), catalog.get_note("Petite.md")
    assert big.chunk_count > 2 * handlers.pipeline.embedder.batch_size  # several batches: room to cut in
    assert small is not None and small.indexed_at < big.indexed_at  # searchable before the big one was done
    assert queues.index.pending_count() == len(waiting)  # every other task still waits for the consumer
    assert all(catalog.get_note(path) is None for path in ("Long.md", "Reconcile.md", "Scan.pdf"))
    assert handlers.trims == 1  # after the big sync, its memory given back; not after the small note


def test_nothing_cuts_in_twice_or_into_a_cut_in(handlers: IndexerHandlers) -> None:
    fresh = FreshEdits(handlers.queues.index, handlers.pipeline.settings)
    handlers.queues.sync_batch(["Petite.md"], priority=EVENT_PRIORITY)
    fresh.running = True  # a note cutting in is itself embedding
    assert fresh.run(frozenset()) == 0 and handlers.queues.index.pending_count() == 1
    fresh.running = False
    assert fresh.run(frozenset()) == 1 and fresh.run(frozenset()) == 0
    assert handlers.pipeline.catalog.get_note("Petite.md") is not None


def test_a_big_sync_pauses_while_it_embeds_and_while_it_stores(
    handlers: IndexerHandlers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pipeline_module, "STORE_SLICE", 16)
    pauses: list[frozenset[str]] = []
    handlers.pipeline.between_batches = pauses.append
    handlers.sync_batch(["Gros.md", "Petite.md"])
    chunks = handlers.pipeline.catalog.get_note("Gros.md").chunk_count
    store_pauses = math.ceil(chunks / 16) - 1
    assert len(pauses) >= store_pauses + 2  # and at least two between encode batches
    assert set(pauses) == {frozenset({"Gros.md", "Petite.md"})}  # what is under way never cuts in
    small = handlers.pipeline.catalog.get_note("Petite.md")
    assert handlers.pipeline.store.count() == chunks + small.chunk_count
    # Saved in the same second (one watcher batch), the small note is stored before the big one's embedding.
    assert small.indexed_at < handlers.pipeline.catalog.get_note("Gros.md").indexed_at


def test_a_sync_from_the_embedding_cache_pauses_before_each_big_note(handlers: IndexerHandlers) -> None:
    """A reindex finds every text in the cache: no encode batch to pause between, yet a big note still costs
    ~0.5 s to store (#34): a save cuts in after the batch's small notes, before each big one."""
    pipeline = handlers.pipeline
    pipeline.sync_paths(["Gros.md", "Petite.md"])
    for path in ("Gros.md", "Petite.md"):
        pipeline.catalog.delete_note(path)  # known to the embedding cache, not to the index: a reindex's case
    pauses: list[frozenset[str]] = []
    pipeline.between_batches = pauses.append
    report = pipeline.sync_paths(["Gros.md", "Petite.md"])
    assert report.chunks_embedded == 0 and report.chunks_cached > pipeline_module.BIG_CHUNKS
    assert pauses == [frozenset({"Gros.md", "Petite.md"})]
    assert pipeline.catalog.get_note("Petite.md").indexed_at < pipeline.catalog.get_note("Gros.md").indexed_at


def test_cutting_a_long_documents_pages_pauses_every_hundred_pages(embedder) -> None:
    pages = [(n, f"Page {n} : une ligne de relevé.") for n in range(1, 251)]
    pauses: list[int] = []
    chunks = chunk_pages("Relevés.pdf", pages, embedder.token_counter, 200, 32, between=lambda: pauses.append(1))
    assert len(pauses) == 2 == (len(pages) - 1) // PAUSE_PAGES
    assert [chunk.page for chunk in chunks] == list(range(1, 251))
