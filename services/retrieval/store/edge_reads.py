"""The Edge store's reads: searches, retrievals, counts and scrolls (``EdgeStore``'s read half).

A search that asks for fields the candidates' map keeps (``candidates``) reads only ids and scores from the
shard and the fields from memory; every other read goes to the shard. Each read holds the store's shared
guard (``_reading``) for its shard call only, so a shard swap waits for in-flight reads and no longer.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager

from qdrant_edge import (
    CountRequest,
    EdgeShard,
    FieldCondition,
    Filter,
    MatchAny,
    MatchValue,
    Query,
    QueryRequest,
    RangeFloat,
    ScrollRequest,
)
from qdrant_edge import SparseVector as EdgeSparse

from services.retrieval.models import SparseVector, StoreFilter, StoreHit
from services.retrieval.store.base import (
    DENSE,
    SPARSE,
    TITLE,
    FilterSyntax,
    build_filter,
    in_order,
    record_to_hit,
    title_vector_map,
)
from services.retrieval.store.candidates import CandidateFields
from services.retrieval.store.edge_folder import DENSE_SEARCH

EDGE_SYNTAX = FilterSyntax(filter=Filter, field=FieldCondition, match_any=MatchAny, range=RangeFloat)


class EdgeReads:
    """The read half of ``EdgeStore``, which provides ``_reading`` (the shard under the shared guard) and
    ``_candidates`` (the map, when this process keeps one)."""

    _candidates: CandidateFields | None

    def _reading(self) -> AbstractContextManager[EdgeShard | None]:
        raise NotImplementedError

    def point_ids(self, path: str) -> set[str]:
        flt = Filter(must=[FieldCondition(key="path", match=MatchValue(path))])
        return {hit.id for hit in self._scroll(flt, batch=1024, with_payload=False)}

    def search_dense(
        self, vector: Sequence[float], flt: StoreFilter | None, limit: int, fields: Sequence[str] | None = None
    ) -> list[StoreHit]:
        return self._query(Query.Nearest(list(vector), using=DENSE), flt, limit, fields)

    def search_sparse(
        self, sparse: SparseVector, flt: StoreFilter | None, limit: int, fields: Sequence[str] | None = None
    ) -> list[StoreHit]:
        if not sparse.indices:
            return []
        query = Query.Nearest(EdgeSparse(list(sparse.indices), list(sparse.values)), using=SPARSE)
        return self._query(query, flt, limit, fields)

    def retrieve(self, ids: Sequence[str], with_vectors: bool = False) -> list[StoreHit]:
        if not ids:
            return []
        with self._reading() as shard:
            if shard is None:
                return []
            records = shard.retrieve(list(ids), with_payload=True, with_vector=[DENSE] if with_vectors else False)
        return in_order(ids, [record_to_hit(record, with_vectors) for record in records])

    def title_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        with self._reading() as shard:
            if shard is None:
                return {}
            return title_vector_map(shard.retrieve(list(ids), with_payload=False, with_vector=[TITLE]))

    def count(self, flt: StoreFilter | None = None) -> int:
        with self._reading() as shard:
            return shard.count(CountRequest(exact=True, filter=edge_filter(flt))) if shard is not None else 0

    def scroll(self, flt: StoreFilter | None = None, batch: int = 256) -> Iterator[StoreHit]:
        return self._scroll(edge_filter(flt), batch, with_payload=True)

    def _query(self, query: Query, flt: StoreFilter | None, limit: int, fields: Sequence[str] | None) -> list[StoreHit]:
        candidates = self._candidates
        if candidates is not None and candidates.covers(fields):
            return self._query_lean(query, flt, limit, candidates, list(fields or ()))
        payload = list(fields) if fields is not None else True
        request = QueryRequest(
            limit=limit, query=query, filter=edge_filter(flt), with_payload=payload, params=DENSE_SEARCH
        )
        with self._reading() as shard:
            points = shard.query(request) if shard is not None else []
        return [record_to_hit(point) for point in points]

    def _query_lean(
        self, query: Query, flt: StoreFilter | None, limit: int, candidates: CandidateFields, fields: list[str]
    ) -> list[StoreHit]:
        """Ids and scores from the shard, the fields from memory; a point written since is read from the shard."""
        request = QueryRequest(
            limit=limit, query=query, filter=edge_filter(flt), with_payload=False, params=DENSE_SEARCH
        )
        with self._reading() as shard:
            if shard is None:
                return []
            scored = [(str(point.id), point.score) for point in shard.query(request)]
            missing = candidates.missing(point_id for point_id, _ in scored)
            read = shard.retrieve(missing, with_payload=fields, with_vector=False) if missing else []
        return candidates.hits(scored, {str(record.id): record.payload or {} for record in read})

    def _scroll(self, flt: Filter | None, batch: int, with_payload: bool) -> Iterator[StoreHit]:
        offset = None
        while True:
            with self._reading() as shard:  # released between batches: a slow consumer blocks nobody
                if shard is None:
                    return
                request = ScrollRequest(offset=offset, limit=batch, filter=flt, with_payload=with_payload)
                records, offset = shard.scroll(request)
            yield from (record_to_hit(record) for record in records)
            if offset is None:
                return


def edge_filter(flt: StoreFilter | None) -> Filter | None:
    return build_filter(flt, EDGE_SYNTAX)
