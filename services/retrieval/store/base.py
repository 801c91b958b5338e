"""The vector-store interface every backend implements, its errors, and the shared filter translation.

One collection holds one point per chunk: a named dense vector ``dense`` (cosine) of the chunk, a
named dense vector ``title`` (cosine) of its note's summary: title, aliases, description, headings (the same
on every chunk of a note; search reads it for the few notes it ranks, ``title_vectors``), a named sparse
vector ``lexical`` (IDF modifier) and the chunk payload described in docs/architecture.md.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from services.config import SetupError
from services.retrieval.models import SparseVector, StoreFilter, StoreHit, StorePoint

DENSE = "dense"
TITLE = "title"
SPARSE = "lexical"
# The shape of a collection. 1: dense + lexical; 2: + the title vector; 3: chunks embedded with their note's
# aliases and description, the title vector a note summary (``services.indexing.context``); 4: OCR chunks carry
# ``ocr`` / ``ocr_confidence`` / ``ocr_low`` and an image whose OCR read no real words has none (issue #32). A
# store built with another layout raises ModelMismatchError with ``layout_only`` set: the indexer then rebuilds
# it by itself.
INDEX_LAYOUT = 4

# Never change it: every stored point id derives from it.
POINT_NAMESPACE = uuid.UUID("5e417076-1c07-41bf-b294-0f3c9b7f4f7d")

KEYWORD_FIELDS = ("path", "tags", "folder", "type", "entities")
FLOAT_FIELDS = ("created_ts", "modified_ts")
INTEGER_FIELDS = ("chunk_index",)


def point_id(path: str, chunk_index: int) -> str:
    """The id of a note's chunk: a UUIDv5 of the vault-relative path and the chunk's position."""
    return str(uuid.uuid5(POINT_NAMESPACE, f"{path}#{chunk_index}"))


class ModelRecord(NamedTuple):
    """The embedding model a collection was built with."""

    name: str
    dim: int
    layout: int = INDEX_LAYOUT


class ModelMismatchError(SetupError):
    """The collection was built with another embedding model or dimension than the one requested."""

    def __init__(self, stored: ModelRecord | None, requested: ModelRecord) -> None:
        self.stored = stored
        self.requested = requested
        built = f"{stored.name} ({stored.dim} dims)" if stored else "an unrecorded model"
        if self.layout_only:
            message = (
                f"The vector store was built by an older ObsiRAG (index layout {stored.layout}, now "
                f"{requested.layout}). Run `obsirag reindex` to rebuild it."
            )
        else:
            message = (
                f"The vector store was built with {built}, but {requested.name} ({requested.dim} dims) "
                "was requested. Run `obsirag reindex` to rebuild it with the configured model."
            )
        super().__init__(message)

    @property
    def layout_only(self) -> bool:
        """Same model, older collection layout: the index can be rebuilt without asking anyone."""
        return self.stored is not None and self.stored[:2] == self.requested[:2]


class StoreLockedError(RuntimeError):
    """The embedded store's folder is already open in another process (or another EdgeStore)."""

    def __init__(self, path: object, owner: str = "") -> None:
        self.path, self.owner = path, owner
        who = f" (pid {owner})" if owner else ""
        super().__init__(
            f"The embedded vector store at {path} is already open in another process{who}: the indexer "
            "owns it. Stop that process, or search through the running system."
        )


class CollectionMissingError(RuntimeError):
    """A write reached a store whose collection does not exist (never ensured, or just reset)."""

    def __init__(self) -> None:
        super().__init__("The vector store has no collection: call ensure_collection(dim, model_name) first.")


class StoreClosedError(RuntimeError):
    """A method was called on a store after close()."""

    def __init__(self) -> None:
        super().__init__("The vector store is closed.")


class VectorStore(ABC):
    """What every backend must do. Ids are point_id() strings; hits carry the full payload.

    Before ensure_collection (or right after reset) the store has no collection: reads return
    nothing (empty lists, 0, no ids) and ``delete_note`` does nothing; ``upsert`` raises
    CollectionMissingError. After close() every method except close() raises StoreClosedError
    (the qdrant-client backend closes its client instead).
    """

    @abstractmethod
    def ensure_collection(self, dim: int, model_name: str) -> None:
        """Create the collection if missing (vectors, payload indexes) and record ``model_name`` and ``dim``.

        Raise ModelMismatchError if it exists with another model name or dimension, or holds points
        without a recorded model. Calling it again with the same model does nothing.
        """

    @abstractmethod
    def recorded_model(self) -> ModelRecord | None:
        """The model recorded by ensure_collection, or None when there is no collection."""

    @abstractmethod
    def upsert(self, points: Sequence[StorePoint]) -> None:
        """Insert or replace points by id (vectors and whole payload). Empty sparse vectors are valid."""

    @abstractmethod
    def delete_note(self, path: str, keep_ids: Collection[str] = ()) -> None:
        """Delete every point whose payload ``path`` is ``path``, except those in ``keep_ids``."""

    @abstractmethod
    def set_note_payload(self, path: str, payload: dict[str, Any]) -> None:
        """Set (add or replace) these payload fields on every point of the note at ``path``; other fields stay.

        A note without points, or a store without collection, is left as it is.
        """

    @abstractmethod
    def point_ids(self, path: str) -> set[str]:
        """The ids of every point of the note at ``path``."""

    @abstractmethod
    def search_dense(
        self, vector: Sequence[float], flt: StoreFilter | None, limit: int, fields: Sequence[str] | None = None
    ) -> list[StoreHit]:
        """At most ``limit`` points matching ``flt``, best cosine similarity first.

        ``fields``: only these payload keys (None: the whole payload). Payloads are most of a search's
        cost in the store binding (~25 µs a hit with the chunk text), so candidates come back lean.
        """

    @abstractmethod
    def search_sparse(
        self, sparse: SparseVector, flt: StoreFilter | None, limit: int, fields: Sequence[str] | None = None
    ) -> list[StoreHit]:
        """At most ``limit`` points matching ``flt`` by IDF-weighted dot product, best first.

        An empty query returns []; points sharing no term with the query are never returned.
        ``fields`` as in ``search_dense``.
        """

    @abstractmethod
    def retrieve(self, ids: Sequence[str], with_vectors: bool = False) -> list[StoreHit]:
        """The points with these ids, in the order asked, unknown ids skipped; score is 0.

        With ``with_vectors`` each hit's ``dense`` holds the stored (normalized) dense vector.
        """

    @abstractmethod
    def title_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """The ``title`` vector of each of these points that has one (unknown ids and points without skipped)."""

    @abstractmethod
    def count(self, flt: StoreFilter | None = None) -> int:
        """The exact number of points matching ``flt`` (all points when None)."""

    @abstractmethod
    def scroll(self, flt: StoreFilter | None = None, batch: int = 256) -> Iterator[StoreHit]:
        """Every point matching ``flt``, ordered by id, fetched ``batch`` at a time; score is 0.

        Locks are never held between batches, so a slow consumer blocks no writer.
        """

    @abstractmethod
    def reset(self) -> None:
        """Drop the collection and the recorded model; ensure_collection then accepts any model."""

    @abstractmethod
    def optimize(self) -> None:
        """Build indexes now (HNSW, segment merges) where the backend needs it; may take seconds."""

    @abstractmethod
    def close(self) -> None:
        """Flush and release the store (and its folder lock). Calling it twice is harmless."""

    def points_to_optimize(self) -> int:
        """Points written since the search graphs were last built beside the live index (``optimize_beside``);
        0 where the backend builds them by itself (a Qdrant server)."""
        return 0

    def optimize_beside(self) -> bool:
        """Build the search graphs without stopping searches (the Edge store: in a child process); False when
        nothing was built."""
        return False

    def flush(self) -> None:  # noqa: B027 (a no-op unless the backend buffers writes)
        """Make every write so far durable (the server backend writes with ``wait=True``: nothing to do)."""

    def keep_candidate_fields(self, fields: Sequence[str]) -> None:  # noqa: B027 (where a backend gains by it)
        """Keep ``fields`` of every point in memory for searches that ask for no more (the Edge store: its
        payload reads are a search's largest cost after the query embedding; a server's are not)."""

    def read_candidate_fields(self) -> None:  # noqa: B027 (where a backend keeps them)
        """Read the fields ``keep_candidate_fields`` named now, if no write has already made them read."""

    def keep_warm(self) -> None:  # noqa: B027 (where a backend maps its files from disk)
        """Keep the files a search reads in the system's page cache, from now and after each switch to a new shard
        (the Edge store, ``store/page_cache.py``; a server keeps its own). For the process that owns the store."""

    def open_next(self) -> VectorStore:
        """An empty or half-built store beside this one, for a rebuild (``services/indexing/rebuild.py``)."""
        raise NotImplementedError

    def swap_in(self, other: VectorStore) -> None:
        """Serve ``other``'s index (from ``open_next``) from now on, atomically for readers."""
        raise NotImplementedError

    def __enter__(self) -> VectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class FilterSyntax(NamedTuple):
    """The constructors a backend expresses filters with; Edge and qdrant-client share keyword names."""

    filter: Callable[..., Any]  # (must=, should=, must_not=)
    field: Callable[..., Any]  # (key=, match=) or (key=, range=)
    match_any: Callable[..., Any]  # (any=)
    range: Callable[..., Any]  # (gte=, lt=)


def build_filter(flt: StoreFilter | None, syntax: FilterSyntax) -> Any | None:
    """Translate a StoreFilter: match-any per keyword field, the date range on created OR modified, AND of all."""
    if flt is None or flt.is_empty():
        return None
    must = [
        syntax.field(key=key, match=syntax.match_any(any=values)) for key, values in _keyword_conditions(flt) if values
    ]
    if flt.since is not None or flt.until is not None:
        must.append(syntax.filter(should=[_date_condition(key, flt, syntax) for key in FLOAT_FIELDS]))
    return syntax.filter(must=must)


def _keyword_conditions(flt: StoreFilter) -> list[tuple[str, list[str]]]:
    types = [str(note_type) for note_type in flt.types]
    keyword = [("path", flt.paths), ("tags", flt.tags), ("folder", flt.folders), ("type", types)]
    return [*keyword, ("entities", flt.entities)]


def _date_condition(key: str, flt: StoreFilter, syntax: FilterSyntax) -> Any:
    return syntax.field(key=key, range=syntax.range(gte=flt.since, lt=flt.until))


def in_order(ids: Sequence[str], hits: Sequence[StoreHit]) -> list[StoreHit]:
    """Hits rearranged in the order of ``ids``, unknown ids skipped."""
    by_id = {hit.id: hit for hit in hits}
    return [by_id[i] for i in dict.fromkeys(ids) if i in by_id]


def point_vectors(point: StorePoint, sparse: object) -> dict[str, Any]:
    """A point's named vectors for a backend, ``sparse`` already in the backend's own type."""
    vectors: dict[str, Any] = {DENSE: list(point.dense), SPARSE: sparse}
    if point.title is not None:
        vectors[TITLE] = list(point.title)
    return vectors


def _record_vectors(record: Any) -> dict[str, Any]:
    return record.vector if isinstance(record.vector, dict) else {}


def record_to_hit(record: Any, with_vectors: bool = False) -> StoreHit:
    """A backend's scored point or record (``id``, ``payload``, maybe ``vector`` and ``score``) as a StoreHit;
    ``with_vectors``: it was read with its dense vector (reading ``vector`` costs the binding a conversion)."""
    dense = _record_vectors(record).get(DENSE) if with_vectors else None
    return StoreHit(
        str(record.id),
        float(getattr(record, "score", 0.0) or 0.0),
        record.payload or {},
        list(dense) if dense is not None else None,
    )


def title_vector_map(records: Iterable[Any]) -> dict[str, list[float]]:
    """{point id: title vector} of a backend's records read with the ``title`` vector."""
    found = {}
    for record in records:
        if (title := _record_vectors(record).get(TITLE)) is not None:
            found[str(record.id)] = list(title)
    return found
