"""The few payload fields a search reads of each candidate, for every point of an Edge shard, in memory.

A search fetches 100 candidates from each list and reads four small fields of each (``path``, ``title``,
``aliases``, ``chunk_index``: ``services.retrieval.search.CANDIDATE_FIELDS``). Asking the shard for them costs about
as much as the vector search itself (1.8 ms of 3.9 at 50k chunks, after a query embedding has emptied the
CPU caches: docs/performance.md, "Search latency"); a dict lookup costs nothing. The indexer, which owns
the store and every write to it, keeps them here; a point the map does not know (a write raced the search)
is read from the shard as before. Each point's fields are one tuple (lists as tuples, a note's title, path and
aliases shared by its chunks): at 173,564 points (the 50,000-note run) 60 MB instead of 91 as a dict each
(docs/performance.md).

Reading the map from the shard holds the GIL (Edge's scroll does): 20 s at 302,607 points (50,000 notes),
while every search waited behind it for seconds. So a clean close saves it beside the shard (``save_map``:
``marshal``, which keeps the shared strings and tuples shared, 26 MB) and the next start reads that file instead
(``load_map``: 0.55 s); the store deletes the file at its first write after opening, so a file that exists
always describes the shard as it is. The file is the store's own, in the user's data folder, like the shard.
"""

from __future__ import annotations

import logging
import marshal
import os
import sys
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from qdrant_edge import EdgeShard, ScrollRequest

from services.retrieval.models import StoreHit

log = logging.getLogger(__name__)

# A field the payload did not have: not None, which a payload may hold; Ellipsis, which no payload holds (they
# come from JSON) and ``marshal`` writes.
_ABSENT = ...
# What the saved map's file holds (``save_map``), with this Python's ``marshal`` version: another reads nothing.
_FORMAT = (1, sys.version_info[:2])


class CandidateFields:
    """``fields`` of each point, by point id, kept current by the store's writes (under its write mutex)."""

    def __init__(self, fields: Sequence[str]) -> None:
        self.fields = tuple(fields)
        self._by_id: dict[str, tuple[Any, ...]] = {}  # values in ``fields``' order, _ABSENT where missing
        self._by_path: dict[str, set[str]] = {}
        self._shared: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # one tuple per distinct list (aliases)
        self._path_slot = self.fields.index("path") if "path" in self.fields else None

    def __len__(self) -> int:
        return len(self._by_id)

    def covers(self, fields: Sequence[str] | None) -> bool:
        """Whether a read of ``fields`` can be served from here (None: the whole payload, never)."""
        return fields is not None and set(fields) <= set(self.fields)

    def get(self, point_id: str) -> dict[str, Any] | None:
        values = self._by_id.get(point_id)
        return self._as_payload(values) if values is not None else None

    def _as_payload(self, values: tuple[Any, ...]) -> dict[str, Any]:
        return {
            key: list(value) if isinstance(value, tuple) else value
            for key, value in zip(self.fields, values, strict=True)
            if value is not _ABSENT
        }

    def _kept(self, value: Any) -> Any:
        if isinstance(value, str):
            return sys.intern(value)
        if isinstance(value, list):
            shared = tuple(value)
            return self._shared.setdefault(shared, shared)
        return value

    def _path(self, values: tuple[Any, ...] | None) -> Any:
        """The path among ``values`` (None when not kept, or the point unknown)."""
        if values is None or self._path_slot is None or values[self._path_slot] is _ABSENT:
            return None
        return values[self._path_slot]

    def missing(self, point_ids: Iterable[str]) -> list[str]:
        """The ids this map does not know (points written while a search ran): to read from the shard."""
        return [point_id for point_id in point_ids if point_id not in self._by_id]

    def hits(self, scored: Iterable[tuple[str, float]], read: dict[str, dict[str, Any]]) -> list[StoreHit]:
        """The hits of ``scored`` (id, score), their fields from here, else from ``read`` (the ``missing``
        ones, read from the shard); a point in neither was deleted since the query: not a result."""
        hits = []
        for point_id, score in scored:
            values = self._by_id.get(point_id)
            lean = self._as_payload(values) if values is not None else read.get(point_id)
            if lean is not None:
                hits.append(StoreHit(point_id, score, dict(lean)))
        return hits

    def put(self, points: Iterable[tuple[str, dict[str, Any]]]) -> None:
        """Record (or replace) each ``(point id, payload)``; fields beyond ``self.fields`` are not kept."""
        for point_id, payload in points:
            values = tuple(self._kept(payload[key]) if key in payload else _ABSENT for key in self.fields)
            path, old = self._path(values), self._by_id.get(point_id)
            if old is not None and self._path(old) != path:
                self._by_path.get(self._path(old), set()).discard(point_id)
            self._by_id[point_id] = values
            self._by_path.setdefault(path, set()).add(point_id)

    def drop_note(self, path: str, keep: Collection[str] = ()) -> None:
        """Forget the points of ``path`` but ``keep`` (what ``delete_note`` deletes)."""
        ids = self._by_path.get(path, set())
        for point_id in [i for i in ids if i not in keep]:
            self._by_id.pop(point_id, None)
            ids.discard(point_id)
        if not ids:
            self._by_path.pop(path, None)

    def update_note(self, path: str, payload: dict[str, Any]) -> None:
        """Apply a ``set_note_payload`` to the points of ``path`` (only the fields kept here)."""
        changed = {key: value for key, value in payload.items() if key in self.fields}
        if not changed:
            return
        for point_id in list(self._by_path.get(path, ())):
            self.put([(point_id, {**self._as_payload(self._by_id[point_id]), **changed})])

    def clear(self) -> None:
        self._by_id.clear()
        self._by_path.clear()
        self._shared.clear()


def read_map(shard: EdgeShard, fields: Sequence[str]) -> CandidateFields:
    """The map of every point of ``shard`` (holds the GIL for the whole scroll)."""
    candidates = CandidateFields(fields)
    offset = None
    while True:
        records, offset = shard.scroll(ScrollRequest(offset=offset, limit=1024, filter=None, with_payload=list(fields)))
        candidates.put((str(record.id), record.payload or {}) for record in records)
        if offset is None:
            return candidates


def save_map(candidates: CandidateFields, target: Path, points: int) -> None:
    """Write ``candidates`` (the map of a shard holding ``points`` points) to ``target``, whole or not at all."""
    state = (candidates._by_id, candidates._by_path, candidates._shared)
    temporary = target.with_suffix(".tmp")
    temporary.write_bytes(marshal.dumps((_FORMAT, candidates.fields, points, state)))
    os.replace(temporary, target)


def load_map(source: Path, fields: Sequence[str], points: int) -> CandidateFields | None:
    """The map saved in ``source`` if it holds ``fields`` for ``points`` points (None: absent or not these)."""
    try:
        saved_format, saved_fields, saved_points, state = marshal.loads(source.read_bytes())
        by_id, by_path, shared = state
    except FileNotFoundError:
        return None
    except (OSError, ValueError, EOFError, TypeError) as exc:  # torn, or written by another Python
        log.warning("the saved candidates' map is unreadable, read from the shard instead: %r", exc)
        return None
    if (saved_format, saved_fields, saved_points) != (_FORMAT, tuple(fields), points) or len(by_id) != points:
        return None
    candidates = CandidateFields(fields)
    candidates._by_id, candidates._by_path, candidates._shared = by_id, by_path, shared
    return candidates
