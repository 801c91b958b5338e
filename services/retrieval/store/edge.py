"""The embedded backend: a Qdrant Edge shard on disk, owned by one process (its folder: ``edge_folder``).

Folder layout: ``shard/`` (the Edge shard: segments, WAL), ``model.json`` (the recorded embedding
model) and ``obsirag.lock`` (a ``filelock`` lock holding the owner's pid, taken while an EdgeStore is
open, so a second opener fails fast with StoreLockedError instead of fighting over the WAL). A rebuild
builds another EdgeStore in ``next/`` beside the live shard; ``swap_in`` moves it in place
(``switch.json`` marks the two renames, so a crash between them is finished at the next open).

Threads: searches run concurrently with each other and with writes (Edge releases the GIL while
it queries); writes are serialized by a mutex; ensure_collection/reset/close wait for in-flight
calls and block new ones while they swap the shard. ``optimize()`` holds the GIL for its whole run: the
indexer calls ``optimize_beside()`` instead (``edge_optimize``). This module holds the lifecycle and the
writes; the reads are ``edge_reads``'s.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

from filelock import FileLock
from qdrant_edge import (
    CountRequest,
    EdgeShard,
    FieldCondition,
    Filter,
    HasIdCondition,
    MatchValue,
    Point,
    UpdateOperation,
)
from qdrant_edge import SparseVector as EdgeSparse

from services.retrieval.models import StorePoint
from services.retrieval.rwlock import ReadWriteLock
from services.retrieval.store.base import (
    CollectionMissingError,
    ModelMismatchError,
    ModelRecord,
    StoreClosedError,
    VectorStore,
    point_vectors,
)
from services.retrieval.store.candidates import CandidateFields, load_map, read_map, save_map
from services.retrieval.store.edge_folder import (
    LIVE_FILE,
    MODEL_FILE,
    NEXT_DIR,
    create_shard,
    finish_switch,
    has_shard,
    live_dir,
    load_shard,
    lock_folder,
    read_model,
    remove_trash,
    to_trash,
    write_model,
)
from services.retrieval.store.edge_optimize import OptimizeBeside, drop_leftover
from services.retrieval.store.edge_reads import EdgeReads
from services.retrieval.store.page_cache import warm_in_background

log = logging.getLogger(__name__)

WRITE_BATCH = 512
CANDIDATES_FILE = "candidates.marshal"  # the candidates' map saved at a clean close (``candidates``)


class EdgeStore(OptimizeBeside, EdgeReads, VectorStore):
    """A VectorStore in ``path``; raises StoreLockedError if another EdgeStore holds that folder."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self._lock_handle: FileLock | None = lock_folder(self.path)
        self._guard = ReadWriteLock()
        self._write_mutex = threading.Lock()
        self._kept_fields: tuple[str, ...] | None = None  # see keep_candidate_fields
        self._candidates: CandidateFields | None = None
        self._map_file_gone = False  # see _map_file_spent
        try:
            finish_switch(self.path)
            remove_trash(self.path)
            drop_leftover(self.path)
            self._shard: EdgeShard | None = load_shard(self._shard_dir) if has_shard(self._shard_dir) else None
        except BaseException:
            self._release_folder()
            raise

    @property
    def _shard_dir(self) -> Path:
        return live_dir(self.path)

    @property
    def _map_file(self) -> Path:
        return self.path / CANDIDATES_FILE

    @property
    def _model_file(self) -> Path:
        return self.path / MODEL_FILE

    # --- lifecycle -------------------------------------------------------------------------

    def ensure_collection(self, dim: int, model_name: str) -> None:
        wanted = ModelRecord(model_name, dim)
        with self._guard.exclusive():
            self._check_open()
            recorded = read_model(self._model_file)
            if self._shard is not None and recorded is None and _points_count(self._shard):
                raise ModelMismatchError(None, wanted)
            if self._shard is not None and recorded not in (None, wanted):
                raise ModelMismatchError(recorded, wanted)
            if self._shard is not None and recorded is None:
                self._drop_shard()  # empty and unrecorded: a crash between create and record
            if self._shard is None:
                self._shard = create_shard(self._shard_dir, dim)
            if recorded != wanted:
                write_model(self._model_file, wanted)

    def recorded_model(self) -> ModelRecord | None:
        with self._reading() as shard:
            return read_model(self._model_file) if shard is not None else None

    def reset(self) -> None:
        with self._guard.exclusive():
            self._check_open()
            self._drop_shard()
            self._model_file.unlink(missing_ok=True)

    def open_next(self) -> EdgeStore:
        """The store a rebuild fills, in ``NEXT_DIR`` (locked like this one)."""
        other = EdgeStore(self.path / NEXT_DIR)
        if self._kept_fields is not None:
            other.keep_candidate_fields(self._kept_fields)
        return other

    def keep_candidate_fields(self, fields: Sequence[str]) -> None:
        """Serve searches that ask for ``fields`` (or fewer) from memory (``services.retrieval.store.candidates``),
        kept current by every write. The map is read at ``read_candidate_fields`` or before the first write,
        whichever comes first (a write first would leave the saved file stale). For the process that owns the
        store for good (the indexer)."""
        self._kept_fields = tuple(fields)

    def read_candidate_fields(self) -> None:
        with self._writing() as shard:
            self._read_candidates(shard)

    def keep_warm(self) -> None:
        self._keep_warm = True  # each switch warms the new shard (``OptimizeBeside._switch_to``)
        if has_shard(self._shard_dir):
            warm_in_background(self._shard_dir)

    def _read_candidates(self, shard: EdgeShard | None) -> None:
        """Under the write mutex: the map from the file the last clean close saved (0.6 s at 302,607 points), else
        from every point of the shard (20 s; searches meanwhile read the shard, writes wait). No shard yet: at
        the first write, once there is one."""
        if self._kept_fields is None or self._candidates is not None or shard is None:
            return
        began = time.monotonic()
        saved = load_map(self._map_file, self._kept_fields, _points_count(shard))
        if saved is None:  # a file refused (torn, another Python's) goes: the close saves this map instead
            self._map_file_spent()
        self._candidates = saved if saved is not None else read_map(shard, self._kept_fields)
        source = "the file saved at the last close" if saved is not None else "the shard"
        seconds = time.monotonic() - began
        log.info("candidates' fields of %d points read from %s in %.1f s", len(self._candidates), source, seconds)

    def swap_in(self, other: EdgeStore) -> None:  # type: ignore[override]
        """Replace this store's shard and model by ``other``'s (a store in ``self.path / NEXT_DIR``), which
        is closed. Readers wait for the few renames and then read the new shard: nobody sees an empty index."""
        if other.path != self.path / NEXT_DIR:
            raise ValueError(f"{other.path} is not {self.path / NEXT_DIR}")
        candidates, other._candidates = other._candidates, None  # the next shard's, kept current while filled
        other.close()
        with self._guard.exclusive():
            self._check_open()
            self._shard_replaced()
            self._switch_to(NEXT_DIR)
            self._candidates = candidates if self._candidates is not None else None
        remove_trash(self.path)

    def flush(self) -> None:
        with self._writing() as shard:
            if shard is not None:
                shard.flush()

    def optimize(self) -> None:
        with self._writing() as shard:
            if shard is not None:
                shard.optimize()

    def close(self) -> None:
        with self._guard.exclusive():
            if self._shard is not None:
                self._shard.flush()
                self._save_written()
                if self._candidates is not None and self._map_file_gone:  # the next start reads it, not the shard
                    save_map(self._candidates, self._map_file, _points_count(self._shard))
                self._shard.close()
                self._shard = None
            self._release_folder()

    # --- writes ----------------------------------------------------------------------------

    def _apply(self, shard: EdgeShard, operation: UpdateOperation, points: int = 0) -> None:
        self._read_candidates(shard)  # while the saved file still describes the shard
        self._map_file_spent()
        super()._apply(shard, operation, points)

    def _shard_replaced(self) -> None:
        self._map_file_spent()
        super()._shard_replaced()

    def _map_file_spent(self) -> None:
        """The saved map describes the shard as it was opened: gone before the first change to it. A close saves
        the map only once it is gone (a map read from the file and never changed is on disk already)."""
        if not self._map_file_gone:
            self._map_file.unlink(missing_ok=True)
            self._map_file_gone = True

    def upsert(self, points: Sequence[StorePoint]) -> None:
        edge_points = [_edge_point(point) for point in points]
        with self._writing() as shard:
            if shard is None:
                raise CollectionMissingError()
            for start in range(0, len(edge_points), WRITE_BATCH):
                batch = edge_points[start : start + WRITE_BATCH]
                self._apply(shard, UpdateOperation.upsert_points(batch), len(batch))
            if self._candidates is not None:
                self._candidates.put((point.id, point.payload) for point in points)

    def delete_note(self, path: str, keep_ids: Collection[str] = ()) -> None:
        keep = [HasIdCondition(set(keep_ids))] if keep_ids else None
        flt = Filter(must=[FieldCondition(key="path", match=MatchValue(path))], must_not=keep)
        with self._writing() as shard:
            if shard is not None:
                self._apply(shard, UpdateOperation.delete_points_by_filter(flt))
                if self._candidates is not None:
                    self._candidates.drop_note(path, keep_ids)

    def set_note_payload(self, path: str, payload: dict[str, Any]) -> None:
        flt = Filter(must=[FieldCondition(key="path", match=MatchValue(path))])
        with self._writing() as shard:
            if shard is not None:
                written = shard.count(CountRequest(exact=True, filter=flt))  # by the path index: ~0.1 ms
                self._apply(shard, UpdateOperation.set_payload_by_filter(flt, payload), written)
                if self._candidates is not None:
                    self._candidates.update_note(path, payload)

    # --- the shard under the guard ---------------------------------------------------------

    @contextlib.contextmanager
    def _reading(self) -> Iterator[EdgeShard | None]:
        with self._guard.shared():
            self._check_open()
            yield self._shard

    @contextlib.contextmanager
    def _writing(self) -> Iterator[EdgeShard | None]:
        with self._guard.shared(), self._write_mutex:
            self._check_open()
            yield self._shard

    def _check_open(self) -> None:
        if self._lock_handle is None:
            raise StoreClosedError()

    def _drop_shard(self) -> None:
        self._shard_replaced()
        if self._candidates is not None:
            self._candidates.clear()
        if self._shard is not None:
            self._shard.close()
            self._shard = None
        if (live := self._shard_dir).exists():
            shutil.rmtree(to_trash(self.path, live))
        (self.path / LIVE_FILE).unlink(missing_ok=True)  # the next shard is made in ``shard``

    def _release_folder(self) -> None:
        if self._lock_handle is not None:
            self._lock_handle.release()
            self._lock_handle = None


def _points_count(shard: EdgeShard) -> int:
    return shard.count(CountRequest(exact=True))


def _edge_point(point: StorePoint) -> Point:
    sparse = EdgeSparse(list(point.sparse.indices), list(point.sparse.values))
    return Point(point.id, point_vectors(point, sparse), point.payload)
