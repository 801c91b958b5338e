"""Rebuild the index beside the live one, then switch: search never goes down.

A reindex, or a configured embedding model that differs from the index's, builds a second index with the
configured model (Edge: a store in ``<store>/next/``; a Qdrant server: a second collection behind the
configured name's alias), a batch of notes at a time (the indexer runs one
``rebuild_step`` task after another, behind the users' edits), while the live store keeps serving
searches with the model that built it and keeps following the vault. ``rebuild.json`` in that folder
holds its progress and ``rebuild-notes.jsonl`` each note done with its content hash (one line per note,
appended at each step: the whole record written again at every step took 57 ms at 50,000 notes, #34), so a
killed indexer resumes where it was. When every
note is done, notes edited meanwhile are redone, and the store's ``swap_in`` moves the new shard in
(Edge) or points the alias at the new collection (server).
The embedding cache makes a same-model reindex cost no model call.
A big next store has its search graphs built before the switch (``next_graphs``).
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import shutil
import time
from collections.abc import Callable

from services import vault
from services.catalog import Catalog
from services.config import Settings, rechosen
from services.indexing import attachments
from services.indexing.chunking import Chunk
from services.indexing.next_graphs import NextGraphs
from services.indexing.pipeline import IndexPipeline, IndexReport, _Prepared
from services.indexing.rebuild_record import (
    NOTES_FILE,
    PROGRESS_FILE,
    RebuildProgress,
    RebuildState,
    progress_of,
    read_notes,
    read_state,
)
from services.retrieval.embedding import Embedder
from services.retrieval.fact_vectors import FactVectors
from services.retrieval.reranker import ChosenReranker
from services.retrieval.search import SearchEngine
from services.retrieval.store import VectorStore
from services.retrieval.store.edge_folder import NEXT_DIR
from services.vault.items import iter_item_paths, read_source

log = logging.getLogger(__name__)
PAUSE_EVERY = 2_000  # paths listed between two chances for a saved note to cut in (listing 50,000 took 0.8 s)


class _NextPipeline(IndexPipeline):
    """The pipeline writing the next store: every note is read and stored, the catalog is left alone."""

    def __init__(self, settings: Settings, store: VectorStore, catalog: Catalog, embedder: Embedder) -> None:
        super().__init__(settings, store, catalog, embedder)  # its own embedding cache, for the next model
        self.hashes: dict[str, str] = {}

    def _prepare(self, path: str, report: IndexReport) -> _Prepared | None:
        if not vault.is_indexable(path, self.settings.exclude, self.settings.attachments) or not self.exists(path):
            return self._gone(path, report)
        if attachments.kind_of(path, self.settings) is not None:
            return self._document(path, report)
        try:
            note = read_source(self.settings, path)
        except (vault.NoteSkipped, FileNotFoundError):
            return self._gone(path, report)
        chunks: list[Chunk] = self._chunk(note)
        self.hashes[path] = note.content_hash
        return _Prepared(note, chunks, self._texts(note, chunks))

    def _document(self, path: str, report: IndexReport) -> _Prepared | None:
        """An attachment from the extraction cache (the live index read it); not there: left out for now."""
        file = self.settings.vault / path
        digest = attachments.content_hash(file)
        extraction = self.extractions.get(digest)
        if extraction is None or attachments.unusable(extraction):
            return self._gone(path, report)
        self.hashes[path] = digest
        return self._pages(path, file, digest, extraction)

    def _gone(self, path: str, report: IndexReport) -> None:
        self.store.delete_note(path)
        self.hashes[path] = ""
        report.deleted.append(path)

    def _store_note(self, item: _Prepared, vectors: list[list[float]], title_vector: list[float]) -> int:
        return self._write_points(item, vectors, title_vector)  # the catalog follows the live index

    def _after_sync(self, report: IndexReport) -> None:
        pass  # links, runs and enrichment belong to the live pipeline


class Rebuild:
    """One rebuild of the index with ``embedder``, beside ``live``'s store."""

    def __init__(
        self,
        settings: Settings,
        live: IndexPipeline,
        embedder: Embedder,
        state: RebuildState,
        engine: SearchEngine | None = None,
        fresh: bool = False,
    ) -> None:
        """``engine``: the live search, switched to the new model with the store; ``fresh``: empty the next
        store first (what a rebuild with another model left there)."""
        self.settings, self.live, self.embedder, self.state = settings, live, embedder, state
        self.folder = settings.store_path / NEXT_DIR  # rebuild.json (and, with Edge, the next store)
        self.store = live.store.open_next()
        if fresh:
            self.store.reset()
            (self.folder / NOTES_FILE).unlink(missing_ok=True)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.store.ensure_collection(embedder.dim, embedder.name)
        self.pipeline = _NextPipeline(settings, self.store, live.catalog, embedder)
        self.pipeline.hashes = {**state.hashes, **read_notes(self.folder / NOTES_FILE)}
        self.pipeline.between_batches = live.between_batches  # a note saved meanwhile cuts in here too
        self._todo: list[str] = []  # the notes still to do, in reverse (``_next``)
        self.engine = engine
        self.finished = False
        self.graphs = NextGraphs(self.store, settings.store_optimize_after_points, self._said_graphs)

    @classmethod
    def start(
        cls, settings: Settings, live: IndexPipeline, embedder: Embedder, engine: SearchEngine | None = None
    ) -> Rebuild:
        """A new rebuild (one already under way with the same model goes on)."""
        resumed = cls.resume(settings, live, embedder, engine)
        if resumed is not None:
            return resumed
        now = time.time()
        state = RebuildState(model=embedder.name, started_at=now, resumed_at=now)
        rebuild = cls(settings, live, embedder, state, engine, fresh=True)
        # The first pass takes the notes the live index knows (the vault's walk cost 0.8 s of the processor at
        # 50,000 notes, which a note saved just then waited behind); the next pass lists the vault for the rest.
        paths = list(live.catalog.note_states())
        rebuild.state.total = len(paths)
        rebuild._todo = rebuild._not_done(paths)
        rebuild._save()
        log.info("rebuilding the index with %s beside the live one (%d notes)", embedder.name, state.total)
        return rebuild

    @classmethod
    def resume(
        cls, settings: Settings, live: IndexPipeline, embedder: Embedder, engine: SearchEngine | None = None
    ) -> Rebuild | None:
        """The rebuild a killed indexer left in ``next/``, if it was for ``embedder``'s model."""
        state = read_state(settings.store_path)
        if state is None or state.model != embedder.name:
            return None
        rebuild = cls(settings, live, embedder, state, engine)
        if state.hashes:  # an earlier version's record, inside rebuild.json: into the notes file from now on
            rebuild._record(list(state.hashes))
            state.hashes = {}
        state.done = state.resumed_done = len(rebuild.pipeline.hashes)
        state.resumed_at = time.time()
        state.building_graphs = False  # a build the killed indexer ran died with it: started again at the end
        log.info("resuming the rebuild with %s: %d notes done", embedder.name, state.done)
        return rebuild

    def step(self, batch: int) -> bool:
        """Index the next ``batch`` notes into the next store; once all are done, build its search graphs if it
        is big (``building`` meanwhile: a step does nothing), then switch. True when finished."""
        if self.building:
            return False
        todo = self._next(batch)
        if todo:
            self.state.embedded += self.pipeline.sync_paths(todo).chunks_embedded
            self.store.flush()  # what the notes file says is done is on disk
            self._record(todo)
            return False
        if self.graphs.start():
            return False
        self._switch()
        return True

    @property
    def building(self) -> bool:
        """The next store's search graphs are being built (``next_graphs``): nothing to step until they are."""
        return self.graphs.building

    def wait_for_graphs(self) -> None:
        """``obsirag reindex`` in the foreground waits here for the graphs instead of stepping in a loop."""
        self.graphs.wait()

    def _said_graphs(self, building: bool) -> None:
        self.state.building_graphs = building
        self._save()

    def _next(self, batch: int) -> list[str]:
        """The next ``batch`` notes to do. The vault is listed once, not at each step (at 20,000 notes a listing
        and a stat of every done note took longer than the step itself, and a save waited behind it); listed
        again when that list is done, for the notes created or deleted meanwhile, then the ones edited."""
        if not self._todo:  # kept in reverse: the next ones at the end
            self._todo = self._not_done() or self._edited_meanwhile()[::-1]
        todo = self._todo[-batch:][::-1]
        del self._todo[-batch:]
        return todo

    def _record(self, paths: list[str]) -> None:
        hashes = self.pipeline.hashes
        lines = "".join(json.dumps([path, hashes[path]], ensure_ascii=False) + "\n" for path in paths if path in hashes)
        with (self.folder / NOTES_FILE).open("a", encoding="utf-8") as notes:
            notes.write(lines)
        self.state.done = len(hashes)
        self.state.total = max(self.state.total, self.state.done)
        self._save()

    def _not_done(self, listed: list[str] | None = None) -> list[str]:
        paths = self._vault_paths() if listed is None else listed
        todo = [path for path in paths if path not in self.pipeline.hashes]
        todo += [p for p, digest in self.pipeline.hashes.items() if digest and not self.pipeline.exists(p)]
        return todo[::-1]

    def progress(self) -> RebuildProgress:
        return progress_of(self.state)

    def _edited_meanwhile(self) -> list[str]:
        # The live pipeline ran the users' edits meanwhile (before each step: they go first in the queue).
        known = {path: state[0] for path, state in self.live.catalog.note_states().items()}
        return [path for path, digest in self.pipeline.hashes.items() if digest and known.get(path, digest) != digest]

    def _switch(self) -> None:
        live = self.live
        if self.engine is not None:
            self.engine.switch(lambda: live.store.swap_in(self.store), self.embedder)
        else:
            live.store.swap_in(self.store)
        shutil.rmtree(self.folder, ignore_errors=True)  # the server's rebuild.json (Edge moved its folder)
        live.embedder, live.cache, live.counter = self.embedder, self.pipeline.cache, self.pipeline.counter
        if self.engine is not None and self.engine.memory is not None:
            self.engine.memory.cache = live.cache  # the facts' vectors kept with the new model's
        live.max_tokens = self.pipeline.max_tokens
        live.cache.forget_other_models()
        self.finished = True
        log.info("the index now answers with %s (%d notes)", self.embedder.name, len(self.pipeline.hashes))

    def _vault_paths(self) -> list[str]:
        settings, pause = self.settings, self.live.between_batches
        notes = vault.iter_vault_paths(settings.vault, settings.exclude, attachments=settings.attachments)
        paths: list[str] = []
        for path in itertools.chain(notes, (path for path, _ in iter_item_paths(settings.connectors_dir))):
            paths.append(path)
            if pause is not None and len(paths) % PAUSE_EVERY == 0:
                pause(frozenset())  # a note saved meanwhile cuts in
        return paths

    def _save(self) -> None:
        target = self.folder / PROGRESS_FILE
        temporary = target.with_suffix(".tmp")
        temporary.write_text(self.state.model_dump_json(), encoding="utf-8")
        os.replace(temporary, target)


def open_pipeline(
    settings: Settings,
    store: VectorStore | None = None,
    embedder: Embedder | None = None,
    reset: bool = False,
    on_indexed: Callable[[list[str]], None] | None = None,
    extract_later: attachments.ExtractLater | None = None,
) -> IndexPipeline:
    """The one assembly of an index pipeline: the configured store, catalog and model (unless given).

    ``reset``: empty the store first (before the pipeline checks the recorded model, which a reindex
    means to replace); ``on_indexed``: see ``IndexPipeline``."""
    from services.retrieval.store import open_store

    store = store or open_store(settings)
    embedder = embedder or indexing_embedder(settings)
    if reset:
        store.reset()
    catalog = Catalog(settings.catalog_path)
    pipeline = IndexPipeline(settings, store, catalog, embedder, on_indexed=on_indexed, extract_later=extract_later)
    pipeline.isolate_extraction = True  # `obsirag index`: a bad document fails alone, the command goes on
    return pipeline


def open_index(
    settings: Settings,
    on_indexed: Callable[[list[str]], None] | None = None,
    extract_later: attachments.ExtractLater | None = None,
) -> tuple[IndexPipeline, SearchEngine, Embedder, Rebuild | None]:
    """The live pipeline and search, the configured model, and the rebuild to run (if any).

    An index built with another model keeps answering with that model while a rebuild with the configured
    one runs beside it; a rebuild left by a killed indexer goes on. ``on_indexed``, ``extract_later``: see
    ``IndexPipeline``."""
    from services.retrieval.store import open_store

    store = open_store(settings)
    configured = indexing_embedder(settings)
    recorded = store.recorded_model()
    stale = recorded is not None and recorded[:2] != (configured.name, configured.dim)
    if stale:
        log.warning(
            "the index was built with %s: it answers until its rebuild with %s is done", recorded.name, configured.name
        )
    live = indexing_embedder(settings, recorded.name) if stale else configured
    pipeline = open_pipeline(settings, store, live, on_indexed=on_indexed, extract_later=extract_later)
    memory = FactVectors(pipeline.catalog, pipeline.cache)
    engine = SearchEngine(store, pipeline.embedder, memory, rerankers=ChosenReranker(settings), cache=pipeline.cache)
    if stale:
        rebuild: Rebuild | None = Rebuild.start(settings, pipeline, configured, engine)
    else:
        rebuild = Rebuild.resume(settings, pipeline, configured, engine)
    return pipeline, engine, configured, rebuild


def chosen_embedder(settings: Settings, current: Embedder) -> Embedder:
    """The embedding model chosen now (``obsirag model use``, read anew), ``current`` when it has not changed:
    a reindex asked while the system runs rebuilds with the new choice, beside the live index."""
    fresh = rechosen(settings)
    if fresh.embedding_model == current.name:
        return current
    return indexing_embedder(fresh)


def indexing_embedder(settings: Settings, model: str | None = None) -> Embedder:
    """``model`` (default: the configured one, through its server when one embeds with it) as an indexer runs
    it: a query on ``torch_threads``, the texts of notes on ``passage_threads``."""
    from services.retrieval.embedding import load_embedder

    served = settings.embedding_served if model is None else None
    return load_embedder(
        model or settings.embedding_model,
        settings.embedding_batch_size,
        settings.torch_threads,
        settings.model_cache,
        served,
        settings.passage_threads,
    )
