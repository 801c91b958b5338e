"""The server backend: a collection reached through qdrant-client (a Qdrant server, or ``":memory:"`` in tests).

The embedding model is recorded in the collection's own metadata (``embedding_model``,
``embedding_dim``), so no reserved point ever shows up in searches, counts or scrolls.

A rebuild fills a second collection (``<name>__a`` or ``<name>__b``, the one not in use) while the live
one answers, then ``swap_in`` points the alias ``<name>`` at it in one alias operation (atomic on the
server) and drops the old one. Every call goes to the physical collection the alias resolved to.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any, TypeVar

from qdrant_client import QdrantClient, models

from services.retrieval.models import SparseVector, StoreFilter, StoreHit, StorePoint
from services.retrieval.store.base import (
    DENSE,
    FLOAT_FIELDS,
    INTEGER_FIELDS,
    KEYWORD_FIELDS,
    SPARSE,
    TITLE,
    CollectionMissingError,
    FilterSyntax,
    ModelMismatchError,
    ModelRecord,
    VectorStore,
    build_filter,
    in_order,
    point_vectors,
    record_to_hit,
    title_vector_map,
)

CLIENT_SYNTAX = FilterSyntax(
    filter=models.Filter, field=models.FieldCondition, match_any=models.MatchAny, range=models.Range
)
MODEL_KEY = "embedding_model"
DIM_KEY = "embedding_dim"
LAYOUT_KEY = "index_layout"
WRITE_BATCH = 256
NEXT_SUFFIXES = ("__a", "__b")
# As the Edge store's (edge_folder.INT8): the server searches int8 copies held in RAM, the float32 originals on
# disk rescore the candidates kept; the title vectors, only read by id, stay on disk.
_INT8 = models.ScalarQuantization(
    scalar=models.ScalarQuantizationConfig(type=models.ScalarType.INT8, quantile=0.99, always_ram=True)
)
# As edge_folder.DENSE_SEARCH, said rather than left to the server's default: twice the candidates from the
# int8 copies, rescored on the originals, so a hit's score is the exact cosine the ranking's thresholds expect.
_DENSE_SEARCH = models.SearchParams(quantization=models.QuantizationSearchParams(rescore=True, oversampling=2.0))

T = TypeVar("T")


class ClientStore(VectorStore):
    """A VectorStore over one collection of a QdrantClient; close() closes the client."""

    def __init__(self, client: QdrantClient, collection: str, owns_client: bool = True) -> None:
        self.client = client
        self.name = collection  # what users configure: an alias once a rebuild has switched
        self._owns_client = owns_client
        self._target: str | None = None

    @property
    def collection(self) -> str:
        """The physical collection: the one the name's alias points to, else the name itself."""
        if self._target is None:
            aliases = {a.alias_name: a.collection_name for a in self.client.get_aliases().aliases}
            self._target = aliases.get(self.name, self.name)
        return self._target

    # --- rebuild beside the live collection ------------------------------------------------

    def open_next(self) -> ClientStore:
        """The collection a rebuild fills (it shares this store's client)."""
        name = next(f"{self.name}{suffix}" for suffix in NEXT_SUFFIXES if f"{self.name}{suffix}" != self.collection)
        return ClientStore(self.client, name, owns_client=False)

    def swap_in(self, other: VectorStore) -> None:
        """Point the alias at ``other``'s collection, then drop the old one. Searches never see a gap,
        except once for a collection created before aliases (it has the alias's name: it goes first)."""
        if not isinstance(other, ClientStore) or other.client is not self.client:
            raise ValueError("swap_in takes a store from open_next()")
        old, operations = self.collection, []
        if old == self.name:
            self.client.delete_collection(old)
        else:
            operations.append(models.DeleteAliasOperation(delete_alias=models.DeleteAlias(alias_name=self.name)))
        create = models.CreateAlias(collection_name=other.collection, alias_name=self.name)
        operations.append(models.CreateAliasOperation(create_alias=create))
        self.client.update_collection_aliases(change_aliases_operations=operations)
        if old != self.name:
            self.client.delete_collection(old)
        self._target = other.collection

    # --- lifecycle -------------------------------------------------------------------------

    def ensure_collection(self, dim: int, model_name: str) -> None:
        wanted = ModelRecord(model_name, dim)
        if not self.client.collection_exists(self.collection):
            self._create(wanted)
            return
        recorded = self.recorded_model()
        if recorded is None and self.count():
            raise ModelMismatchError(None, wanted)
        if recorded is None:  # empty and unrecorded: rebuild it with our schema
            self.reset()
            self._create(wanted)
        elif recorded != wanted:
            raise ModelMismatchError(recorded, wanted)

    def recorded_model(self) -> ModelRecord | None:
        if not self.client.collection_exists(self.collection):
            return None
        metadata = self.client.get_collection(self.collection).config.metadata or {}
        if MODEL_KEY not in metadata or DIM_KEY not in metadata:
            return None
        return ModelRecord(str(metadata[MODEL_KEY]), int(metadata[DIM_KEY]), int(metadata.get(LAYOUT_KEY, 1)))

    def reset(self) -> None:
        self.client.delete_collection(self.collection)
        self._target = None  # its alias went with it

    def optimize(self) -> None:
        """Nothing to do: a Qdrant server optimizes in the background."""

    def close(self) -> None:
        if self._owns_client:
            self.client.close()

    # --- writes ----------------------------------------------------------------------------

    def upsert(self, points: Sequence[StorePoint]) -> None:
        structs = [_point_struct(point) for point in points]
        for start in range(0, len(structs), WRITE_BATCH):
            batch = structs[start : start + WRITE_BATCH]
            self._write(lambda batch=batch: self.client.upsert(self.collection, points=batch, wait=True))

    def delete_note(self, path: str, keep_ids: Collection[str] = ()) -> None:
        keep = [models.HasIdCondition(has_id=list(keep_ids))] if keep_ids else None
        flt = models.Filter(must=[_path_condition(path)], must_not=keep)
        selector = models.FilterSelector(filter=flt)
        self._call(lambda: self.client.delete(self.collection, points_selector=selector, wait=True), None)

    def set_note_payload(self, path: str, payload: dict[str, Any]) -> None:
        selector = models.FilterSelector(filter=models.Filter(must=[_path_condition(path)]))
        self._call(lambda: self.client.set_payload(self.collection, payload=payload, points=selector, wait=True), None)

    # --- reads -----------------------------------------------------------------------------

    def point_ids(self, path: str) -> set[str]:
        flt = models.Filter(must=[_path_condition(path)])
        return {hit.id for hit in self._scroll(flt, batch=1024, with_payload=False)}

    def search_dense(
        self, vector: Sequence[float], flt: StoreFilter | None, limit: int, fields: Sequence[str] | None = None
    ) -> list[StoreHit]:
        return self._query(list(vector), DENSE, flt, limit, fields)

    def search_sparse(
        self, sparse: SparseVector, flt: StoreFilter | None, limit: int, fields: Sequence[str] | None = None
    ) -> list[StoreHit]:
        if not sparse.indices:
            return []
        query = models.SparseVector(indices=list(sparse.indices), values=list(sparse.values))
        return self._query(query, SPARSE, flt, limit, fields)

    def retrieve(self, ids: Sequence[str], with_vectors: bool = False) -> list[StoreHit]:
        if not ids:
            return []
        vectors: list[str] | bool = [DENSE] if with_vectors else False

        def fetch() -> list[Any]:
            return self.client.retrieve(self.collection, list(ids), with_payload=True, with_vectors=vectors)

        return in_order(ids, [record_to_hit(record, with_vectors) for record in self._call(fetch, [])])

    def title_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        if not ids:
            return {}

        def fetch() -> list[Any]:
            return self.client.retrieve(self.collection, list(ids), with_payload=False, with_vectors=[TITLE])

        return title_vector_map(self._call(fetch, []))

    def count(self, flt: StoreFilter | None = None) -> int:
        condition = _filter(flt)
        return self._call(lambda: self.client.count(self.collection, count_filter=condition).count, 0)

    def scroll(self, flt: StoreFilter | None = None, batch: int = 256) -> Iterator[StoreHit]:
        return self._scroll(_filter(flt), batch, with_payload=True)

    # --- helpers ---------------------------------------------------------------------------

    def _create(self, model: ModelRecord) -> None:
        try:
            self.client.create_collection(
                self.collection,
                vectors_config={
                    DENSE: models.VectorParams(
                        size=model.dim, distance=models.Distance.COSINE, on_disk=True, quantization_config=_INT8
                    ),
                    TITLE: models.VectorParams(size=model.dim, distance=models.Distance.COSINE, on_disk=True),
                },
                sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
                metadata={MODEL_KEY: model.name, DIM_KEY: model.dim, LAYOUT_KEY: model.layout},
            )
        except Exception:
            if not self.client.collection_exists(self.collection):
                raise
            self.ensure_collection(model.dim, model.name)  # another process created it first: check it
            return
        self._create_indexes()

    def _create_indexes(self) -> None:
        schemas = [(KEYWORD_FIELDS, models.PayloadSchemaType.KEYWORD)]
        schemas += [(FLOAT_FIELDS, models.PayloadSchemaType.FLOAT)]
        schemas += [(INTEGER_FIELDS, models.PayloadSchemaType.INTEGER)]
        with warnings.catch_warnings():  # local mode (tests) warns that payload indexes do nothing there
            warnings.filterwarnings("ignore", message="Payload indexes have no effect", category=UserWarning)
            for fields, schema in schemas:
                for field in fields:
                    self.client.create_payload_index(self.collection, field, schema, wait=True)

    def _query(
        self, query: Any, using: str, flt: StoreFilter | None, limit: int, fields: Sequence[str] | None
    ) -> list[StoreHit]:
        def run() -> list[Any]:
            return self.client.query_points(
                self.collection,
                query=query,
                using=using,
                query_filter=_filter(flt),
                search_params=_DENSE_SEARCH if using == DENSE else None,
                limit=limit,
                with_payload=list(fields) if fields is not None else True,
            ).points

        return [record_to_hit(point) for point in self._call(run, [])]

    def _scroll(self, flt: models.Filter | None, batch: int, with_payload: bool) -> Iterator[StoreHit]:
        offset = None
        while True:
            page = self._call(
                lambda offset=offset: self.client.scroll(
                    self.collection, scroll_filter=flt, limit=batch, offset=offset, with_payload=with_payload
                ),
                ([], None),
            )
            records, offset = page
            yield from (record_to_hit(record) for record in records)
            if offset is None:
                return

    def _call(self, call: Callable[[], T], empty: T) -> T:
        """``call()``, or ``empty`` when it failed because the collection does not exist."""
        try:
            return call()
        except Exception:
            if self.client.collection_exists(self.collection):
                raise
            return empty

    def _write(self, call: Callable[[], object]) -> None:
        try:
            call()
        except Exception as exc:
            if self.client.collection_exists(self.collection):
                raise
            raise CollectionMissingError() from exc


def _filter(flt: StoreFilter | None) -> models.Filter | None:
    return build_filter(flt, CLIENT_SYNTAX)


def _path_condition(path: str) -> models.FieldCondition:
    return models.FieldCondition(key="path", match=models.MatchValue(value=path))


def _point_struct(point: StorePoint) -> models.PointStruct:
    sparse = models.SparseVector(indices=list(point.sparse.indices), values=list(point.sparse.values))
    return models.PointStruct(id=point.id, vector=point_vectors(point, sparse), payload=point.payload)
