"""The indexing pipeline: parse → chunk → embed → upsert → drop stale chunks → catalog.

Every entry point compares the disk with the catalog, so replaying an event, a batch or a whole
reconcile is harmless: an unchanged note is never embedded twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from services import vault
from services.attachments.cache import ExtractionCache
from services.attachments.models import Extraction, ExtractionStatus
from services.catalog import Catalog
from services.catalog.models import NoteRecord, NoteStatus
from services.catalog.problems import OUTSIDE_VAULT
from services.config import Settings
from services.indexing import attachments
from services.indexing.batching import embed_texts
from services.indexing.chunking import Chunk, chunk_note, chunk_pages, embedding_texts, fitted_context
from services.indexing.context import note_summary
from services.indexing.conversations import evidence_body
from services.indexing.entities import payload_names
from services.indexing.points import indexed_record, note_points
from services.indexing.reconcile import stat_matches
from services.indexing.report import IndexReport
from services.retrieval.embedding import Embedder
from services.retrieval.embedding_cache import EmbeddingCache
from services.retrieval.store import ModelMismatchError, VectorStore
from services.vault.items import is_item, item_file, read_source
from services.vault.models import NoteType, ParsedNote

log = logging.getLogger(__name__)

STORE_SLICE = 128  # points built and written at a time (~0.2 s: a pause for fresh edits between two)
BIG_CHUNKS = 64  # a note or document of more chunks is embedded after the rest of its batch


@dataclass
class _Prepared:
    """A parsed note and its chunks, waiting for their embeddings."""

    note: ParsedNote
    chunks: list[Chunk]
    texts: list[str] = field(default_factory=list)
    warning: str | None = None  # recorded with the indexed note (an attachment's low-confidence pages)
    page_payload: dict[int, dict[str, object]] = field(default_factory=dict)  # OCR pages: ``ocr_payloads``


class IndexPipeline:
    """Owns the write side of the store and the catalog for one vault."""

    def __init__(
        self,
        settings: Settings,
        store: VectorStore,
        catalog: Catalog,
        embedder: Embedder,
        cache: EmbeddingCache | None = None,
        on_indexed: Callable[[list[str]], None] | None = None,
        extract_later: attachments.ExtractLater | None = None,
    ) -> None:
        """``on_indexed``: called with the paths each sync indexed (the indexer enqueues their enrichment);
        ``extract_later``: called with an attachment whose text is not in the extraction cache (the indexer
        queues it on ``extract``); without it the document is read at once."""
        self.settings = settings
        self.store = store
        self.catalog = catalog
        self.embedder = embedder
        self.cache = cache or EmbeddingCache.of(settings, embedder)
        self.counter = embedder.token_counter
        self.max_tokens = min(settings.chunk_tokens, embedder.max_tokens)
        self.run_id: int | None = None
        self.on_indexed = on_indexed
        self.extract_later = extract_later
        self.isolate_extraction = False  # documents read at once in a child process (``open_pipeline``)
        # Called between two encode batches with the paths being embedded: the indexer runs the notes a user
        # saved meanwhile (``services.system.fresh_edits``), so a 2,000-page PDF never holds them up.
        self.between_batches: Callable[[frozenset[str]], None] | None = None
        self._pause: Callable[[], None] | None = None  # ``between_batches`` for the sync under way
        self.extractions = ExtractionCache(settings.extraction_cache_path)
        try:
            store.ensure_collection(embedder.dim, embedder.name)
        except ModelMismatchError as exc:
            if not exc.layout_only:  # another model: the user decides (`obsirag reindex`)
                raise
            # Built by an older ObsiRAG with the same model: the index is derived data, rebuild it.
            log.warning("%s Rebuilding it now.", exc)
            self.rebuild()

    # --- public entry points -------------------------------------------------------------

    def sync_paths(self, paths: Iterable[str], raise_errors: bool = False) -> IndexReport:
        """Make the index agree with the disk for each path (index, skip, or delete)."""
        paths = list(dict.fromkeys(paths))
        previous, self._pause = self._pause, self._pause_for(frozenset(paths))
        try:
            return self._sync(paths, raise_errors)
        finally:
            self._pause = previous  # a note that cut in leaves the big sync its own pause

    def _pause_for(self, busy: frozenset[str]) -> Callable[[], None] | None:
        between = self.between_batches
        return (lambda: between(busy)) if between is not None else None

    def _sync(self, paths: list[str], raise_errors: bool) -> IndexReport:
        report = IndexReport()
        prepared: list[_Prepared] = []
        for path in paths:
            try:
                item = self._prepare(path, report)
            except Exception as exc:  # one bad note never stops the batch
                if raise_errors:
                    raise
                log.exception("cannot prepare %s", path)
                report.failed[path] = _describe(exc)
                continue
            if item is not None:
                prepared.append(item)
        # The small notes of a batch first, together, then each big one: a note saved in the same second as a
        # 10,000-link note is searchable before the big one's minute of embedding, not after. A note saved
        # meanwhile cuts in before each big one (from the embedding cache, a reindex, one still takes ~0.5 s).
        small = [item for item in prepared if len(item.chunks) <= BIG_CHUNKS]
        big = [[item] for item in prepared if len(item.chunks) > BIG_CHUNKS]
        for number, group in enumerate(group for group in [small, *big] if group):
            if number and self._pause is not None:
                self._pause()
            self._embed_and_store(group, report, raise_errors)
        self._after_sync(report)
        return report

    def _after_sync(self, report: IndexReport) -> None:
        if report.indexed or report.deleted:
            touched = [*report.indexed, *report.deleted, *report.skipped, *report.failed]
            self.catalog.resolve_links(changed=touched)  # only the links this batch can change
            self.cache.prune_now_and_then()
        self._record_run(report)
        notes = [p for p in report.indexed if attachments.kind_of(p, self.settings) is None]
        if notes and self.on_indexed is not None:  # NER and the learner read notes, not documents
            self.on_indexed(notes)

    def rebuild(self) -> None:
        """Forget everything (store and catalog) so that the next sync re-embeds the vault."""
        self.store.reset()
        self.store.ensure_collection(self.embedder.dim, self.embedder.name)
        for path in list(self.catalog.note_states()):
            self.catalog.delete_note(path)
        self.cache.forget_uses()  # the vectors stay: the next sync finds them

    def mark_failed(self, path: str, message: str) -> None:
        self.catalog.mark_status(path, NoteStatus.ERROR, message)

    # --- steps --------------------------------------------------------------------------

    def _prepare(self, path: str, report: IndexReport) -> _Prepared | None:
        if not vault.is_indexable(path, self.settings.exclude, self.settings.attachments) or not self.exists(path):
            self._delete(path, report)
            return None
        record = self.catalog.get_note(path)
        if (
            record is not None
            and record.status != NoteStatus.ERROR
            and self._stat_matches(path, record.mtime, record.size)
        ):
            report.unchanged.append(path)
            return None
        kind = attachments.kind_of(path, self.settings)
        if kind is not None:
            return self._prepare_attachment(path, kind, record, report)
        try:
            note = read_source(self.settings, path)  # a vault note, or a connected source's mail or event
        except vault.NoteSkipped as exc:
            self._skip(path, exc.reason, report)
            return None
        except vault.PathOutsideVault:  # a symlink out of the vault: a reason, not an error to retry
            self._skip(path, OUTSIDE_VAULT, report)
            return None
        except FileNotFoundError:  # deleted between the check and the read
            self._delete(path, report)
            return None
        if record is not None and record.status == NoteStatus.INDEXED and record.content_hash == note.content_hash:
            self.catalog.upsert_note(record.model_copy(update={"mtime": note.mtime, "size": note.size}))
            report.unchanged.append(path)
            return None
        chunks = self._chunk(note)
        return _Prepared(note, chunks, self._texts(note, chunks))

    def _prepare_attachment(
        self, path: str, kind: str, record: NoteRecord | None, report: IndexReport
    ) -> _Prepared | None:
        """A document: its pages from the extraction cache (else queued for extraction, or read now)."""
        try:
            file = vault.resolve_in_vault(self.settings.vault, path)
        except vault.PathOutsideVault:
            self._skip(path, OUTSIDE_VAULT, report)
            return None
        if reason := attachments.too_big(file, kind, self.settings):
            self._skip(path, reason, report)
            return None
        digest = attachments.content_hash(file)
        if record is not None and record.status == NoteStatus.INDEXED and record.content_hash == digest:
            stat = self._stat(path) or (record.mtime, record.size)
            self.catalog.upsert_note(record.model_copy(update={"mtime": stat[0], "size": stat[1]}))
            report.unchanged.append(path)
            return None
        extraction = attachments.cached_or_extracted(
            self.extractions, self.settings, path, digest, self.extract_later, self.isolate_extraction
        )
        if extraction is None:
            report.extracting.append(path)
            return None
        if attachments.unusable(extraction):  # recorded with its reason, never retried: the file is the problem
            failed = extraction.status == ExtractionStatus.FAILED
            reason = attachments.skip_reason(extraction)
            self._skip(path, reason, report, NoteStatus.ERROR if failed else NoteStatus.SKIPPED)
            return None
        return self._pages(path, file, digest, extraction)

    def _pages(self, path: str, file: Path, digest: str, extraction: Extraction) -> _Prepared:
        note = attachments.attachment_note(path, file, digest, extraction)
        pages = attachments.page_texts(extraction)
        context = fitted_context(note, self.counter, self.max_tokens)  # the same line ``_texts`` embeds
        chunks = chunk_pages(
            note.title, pages, self.counter, self.max_tokens, self.settings.chunk_overlap_tokens, context, self._pause
        )
        texts, ocr = self._texts(note, chunks), attachments.ocr_payloads(extraction)
        return _Prepared(note, chunks, texts, warning=attachments.warning(extraction), page_payload=ocr)

    def _chunk(self, note: ParsedNote) -> list[Chunk]:
        if note.note_type == NoteType.CONVERSATION:  # the assistant's own replies are no evidence
            note = note.model_copy(update={"body": evidence_body(note.body)})
        return chunk_note(note, self.counter, self.max_tokens, self.settings.chunk_overlap_tokens)

    def _texts(self, note: ParsedNote, chunks: list[Chunk]) -> list[str]:
        return embedding_texts(note, chunks, self.counter, self.max_tokens)

    def _embed_and_store(self, prepared: list[_Prepared], report: IndexReport, raise_errors: bool) -> None:
        texts = [text for item in prepared for text in item.texts]
        token_counts = [chunk.token_count for item in prepared for chunk in item.chunks]
        # Each note's summary goes through the model too (the store's ``title`` vector: title, aliases,
        # description, headings; ``context.note_summary``): one text per note, batched with the chunks.
        titles = [note_summary(item.note) for item in prepared]
        vectors, encoded = embed_texts(
            self.embedder,
            self.cache,
            texts + titles,
            token_counts + [self.counter.count(t) for t in titles],
            between=self._pause,
        )
        title_vectors = vectors[len(texts) :]
        embedded = sum(1 for i in encoded if i < len(texts))
        report.chunks_embedded += embedded
        report.chunks_cached += len(texts) - embedded
        offset = 0
        for item, title_vector in zip(prepared, title_vectors, strict=True):
            count = len(item.chunks)
            try:
                written = self._store_note(item, vectors[offset : offset + count].tolist(), title_vector.tolist())
                report.indexed.append(item.note.path)
                report.chunks_written += written
            except Exception as exc:
                if raise_errors:
                    raise
                log.exception("cannot store %s", item.note.path)
                report.failed[item.note.path] = _describe(exc)
            offset += count

    def _store_note(self, item: _Prepared, vectors: list[list[float]], title_vector: list[float]) -> int:
        """Stores the note's chunks and its catalog row; how many chunks."""
        note = item.note
        written = self._write_points(item, vectors, title_vector)
        message = item.warning or note.frontmatter_error
        self.catalog.upsert_note(indexed_record(note, message, written))
        self.catalog.replace_links(note.path, note.links)
        return written

    def _write_points(self, item: _Prepared, vectors: list[list[float]], title_vector: list[float]) -> int:
        """The note's points in the store, its stale ones removed, its texts' cache uses recorded; how many."""
        note = item.note
        ids: set[str] = set()
        # In slices: a 2,000-page PDF's 6,000 points take seconds to build (their sparse vectors), and a note
        # saved meanwhile cuts in between two.
        for start in range(0, len(item.chunks), STORE_SLICE):
            if start and self._pause is not None:
                self._pause()
            end = start + STORE_SLICE
            points = note_points(note, item.chunks[start:end], vectors[start:end], title_vector, [], item.page_payload)
            self.store.upsert(points)
            ids.update(point.id for point in points)
        self.store.delete_note(note.path, keep_ids=ids)
        # The entities known until NER runs again, set once on all the note's points: the store's binding
        # converts a payload's list item by item (~5 µs each), and 255 names on each of 227 chunks cost 0.3 s.
        if entities := payload_names(self.catalog.note_entities(note.path)):
            self.store.set_note_payload(note.path, {"entities": entities})
        self.cache.record_uses(note.path, [*item.texts, note_summary(note)])
        return len(ids)

    def _skip(self, path: str, reason: str, report: IndexReport, status: NoteStatus = NoteStatus.SKIPPED) -> None:
        self.store.delete_note(path)
        self.cache.forget_uses(path)
        stat = self._stat(path)
        record = NoteRecord(
            path=path,
            status=status,
            message=reason,
            mtime=stat[0] if stat else 0.0,
            size=stat[1] if stat else 0,
            title=Path(path).stem,
            indexed_at=datetime.now(UTC),
        )
        self.catalog.upsert_note(record)
        self.catalog.replace_links(path, [])
        report.skipped[path] = reason

    def _delete(self, path: str, report: IndexReport) -> None:
        self.store.delete_note(path)
        self.cache.forget_uses(path)
        if self.catalog.get_note(path) is not None:
            self.catalog.delete_note(path)
        report.deleted.append(path)

    def _record_run(self, report: IndexReport) -> None:
        if self.run_id is None:
            return
        self.catalog.add_run_stats(
            self.run_id,
            notes_indexed=len(report.indexed),
            notes_skipped=len(report.skipped),
            notes_failed=len(report.failed),
            notes_deleted=len(report.deleted),
            chunks_embedded=report.chunks_embedded,
            chunks_cached=report.chunks_cached,
        )

    # --- disk helpers -------------------------------------------------------------------

    def _file(self, path: str) -> Path:
        if is_item(path):
            try:
                return item_file(self.settings.connectors_dir, path)
            except vault.PathOutsideVault:
                return self.settings.connectors_dir / "missing"  # no such file: the item is deleted
        return self.settings.vault / path

    def _stat(self, path: str) -> tuple[float, int] | None:
        try:
            st = self._file(path).stat()
        except OSError:
            return None
        return st.st_mtime, st.st_size

    def exists(self, path: str) -> bool:
        return self._file(path).is_file()

    def _stat_matches(self, path: str, mtime: float, size: int) -> bool:
        return stat_matches(self._file(path), mtime, size)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"
