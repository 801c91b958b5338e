"""Hybrid search: dense + sparse + title/alias matches, fused by score, filtered, grouped by note."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from pydantic import BaseModel, Field

from services.language.dates import parse_date_range, strip_date_expression
from services.language.detect import detect_language
from services.retrieval import lexical
from services.retrieval.crosslingual import english_axis, english_common, without_language
from services.retrieval.embedding import Embedder, calibration
from services.retrieval.embedding_cache import EmbeddingCache
from services.retrieval.fact_vectors import FactVectors, MemoryMatch
from services.retrieval.fusion import FusedHit, NoteHit, boost_title_matches, fuse_scores, rank_notes
from services.retrieval.learned import POOL, LearnedMarks, rerank
from services.retrieval.matching import snippet, title_matcher, title_similarities
from services.retrieval.models import SparseVector, StoreFilter, StoreHit
from services.retrieval.query_terms import META_TERMS, coverage, query_terms
from services.retrieval.reranker import RerankerSource, cross_encode
from services.retrieval.rwlock import ReadWriteLock
from services.retrieval.store import VectorStore
from services.vault.models import NoteType

CANDIDATES = 100  # chunks fetched from each list before fusion (CNIL: 50 → 100, MRR +0.01)
# What fusion reads of a candidate (grouping, title matches, opening chunk); the results' chunks are then read whole.
CANDIDATE_FIELDS = ("path", "title", "aliases", "chunk_index")
# The store searches without the GIL: the lexical list is searched beside the dense one, not after it.
_LISTS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="search-lists")


class SearchRequest(BaseModel):
    query: str
    k: int = 10
    tags: list[str] = Field(default_factory=list)
    folders: list[str] = Field(default_factory=list)
    types: list[NoteType] = Field(default_factory=list)
    since: datetime | None = None
    until: datetime | None = None
    parse_dates: bool = True  # read "cette semaine", "last month"… from the query when no explicit range
    now: datetime | None = None  # the reference time for date expressions (defaults to the server's clock)
    entities: list[str] = Field(
        default_factory=list
    )  # normalised entity names (services.indexing.mentions.normalize_name)
    memory: bool = False  # also the confirmed facts close to the query in meaning (the chat's memory recall)
    # Notes in the fused-score order the grounding guard was fitted on (the chat asks so), not with the
    # model's heavier title term for the order (``Calibration.order_title_weight``): its evidence stays put.
    guard_order: bool = False


class SearchResult(BaseModel):
    path: str
    title: str
    score: float  # the note's fused score: the evidence the grounding guard, the main note and the listing read
    heading: str
    snippet: str
    text: str = ""  # the best chunk's full text (the chat engine packs it into its prompt)
    dense_score: float | None = None  # cosine similarity of the best chunk, when it came from the dense list
    chunk_index: int
    note_type: str
    dense_rank: int | None = None
    sparse_rank: int | None = None
    sparse_score: float | None = None  # IDF-weighted term score of the best chunk, when it came from the sparse list
    title_match: bool = False
    title_similarity: float | None = None  # cosine between the query and the note's title embedding
    matched_terms: list[str] = Field(default_factory=list)
    rank_score: float | None = None  # what orders the results (``score`` with the order's title weight)
    page: int | None = None  # an attachment's page (PDF page, slide, chapter) holding the best chunk
    ocr: str | None = None  # the best chunk is OCR text: "image" (a screenshot, a photo) or "scan" (a PDF page)
    ocr_confidence: float | None = None  # that OCR page's mean word confidence, 0–100
    ocr_low: bool = False  # below OBSIRAG_OCR_MIN_CONFIDENCE: cited, never the main note
    learned: bool = False  # placed by a recorded question close to this one (first, or last for « pas ça »)
    learned_similarity: float | None = None  # the cosine of the recorded question that pulled it (not « pas ça »)
    rerank_score: float | None = None  # the reranker's relevance of this note's best passage, 0..1 (when one ran)

    @property
    def screenshot(self) -> bool:
        """An image's OCR text (a screenshot, a photo): its citation says « capture d'écran »."""
        return self.ocr == "image"


class SearchResponse(BaseModel):
    query: str
    retrieval_query: str
    since: datetime | None = None
    until: datetime | None = None
    results: list[SearchResult]
    timings_ms: dict[str, float] = Field(default_factory=dict)
    memory: list[MemoryMatch] = Field(default_factory=list)  # asked for with ``memory``, best first
    known: float | None = None  # with ``guard_order``: share of the query's words some note holds (``_known``)
    reranker: str | None = None  # the cross-encoder that ordered the results (``timings_ms["rerank"]``)
    model: str | None = None  # the embedding model of the index that answered (its calibration is the guard's)


class SearchEngine:
    """Answers ``SearchRequest``s from a vector store with the configured embedding model."""

    def __init__(
        self,
        store: VectorStore,
        embedder: Embedder,
        memory: FactVectors | None = None,
        marks: LearnedMarks | None = None,
        rerankers: RerankerSource | None = None,
        cache: EmbeddingCache | None = None,
    ) -> None:
        """``memory``: where ``SearchRequest.memory`` finds the facts (None: no fact matches); ``marks``: the
        questions the user's clicks recorded against notes (None: nothing learned); ``rerankers``: the
        reranker in use, if any (``services.retrieval.reranker``); ``cache``: the embedding cache, which keeps
        the fixed reference questions' vectors across restarts."""
        self.store = store
        self.memory = memory
        self.marks = marks
        self.rerankers = rerankers
        self.cache = cache
        self._switching = ReadWriteLock()  # a search reads one model's index with that model's queries
        self.use_embedder(embedder)

    def use_embedder(self, embedder: Embedder) -> None:
        """Queries embedded with ``embedder`` from now on (a rebuild switched the index to it)."""
        self.embedder = embedder
        self.calibration = calibration(embedder.name)  # the model's share in the fusion, its title weight

    def switch(self, swap: Callable[[], None], embedder: Embedder) -> None:
        """Run ``swap`` (the store's index replaced by one built with ``embedder``) and use ``embedder``, with
        no search in between: a search half on each side would embed with one model and read the other's."""
        with self._switching.exclusive():
            swap()
            self.use_embedder(embedder)

    def warm(self) -> None:
        """Now (the indexer's start), what the first searches would pay: the memory's reference means, the
        English axis and stop words (1.4 s of the processor for the first English search after a start, #34)."""
        if self.memory is not None:
            self.memory.warm(self.embedder)
        if self.calibration.language_axis:
            english_axis(self.embedder, self.cache)
        english_common()

    def search(self, request: SearchRequest) -> SearchResponse:
        with self._switching.shared():
            return self._search(request)

    def _search(self, request: SearchRequest) -> SearchResponse:
        started = time.perf_counter()
        text, since, until = _query_and_range(request)
        flt = _store_filter(request, since, until)
        vector = self.embedder.encode_query(text or request.query)
        cal = self.calibration
        english = detect_language(text or request.query) == "en"
        # An English question meets French notes by what it is about (services.retrieval.crosslingual); a
        # French one keeps its vector (taking the axis out of it too: CNIL MRR@10 0.770 → 0.767).
        axis = english_axis(self.embedder, self.cache) if english and cal.language_axis else None
        meaning = without_language(vector, axis) if axis is not None else vector
        embedded = time.perf_counter()
        lexical_list = _LISTS.submit(self._lexical, text, flt, cal.sparse_by_coverage, english)
        known = _LISTS.submit(self._known, text) if request.guard_order else None
        dense = self.store.search_dense(meaning, flt, CANDIDATES, CANDIDATE_FIELDS)
        sparse, coverage = lexical_list.result()
        sparse_weight = (1.0 - cal.dense_weight) * coverage
        fused = fuse_scores(dense, sparse, cal.dense_weight, sparse_weight)
        fused = boost_title_matches(fused, title_matcher(text))
        titles = title_similarities(self.store, meaning)
        order = (
            {} if request.guard_order else {"order_title_weight": cal.order_title_weight, "order_lead": cal.order_lead}
        )
        close = self.marks.close_to(self.embedder, vector) if self.marks is not None else []
        reranker = self.rerankers.current() if self.rerankers is not None else None
        wanted = max(request.k, POOL) if close else request.k
        depth = max(wanted, self.rerankers.notes) if reranker and self.rerankers else wanted
        notes = rank_notes(fused, depth, titles, cal.title_weight, **order)
        reranked: dict[str, float] = {}
        if reranker is not None:  # before the marks: what the user chose for a close question still wins
            ranked = time.perf_counter()
            self._read_whole([note.best for note in notes])
            notes, reranked = cross_encode(reranker, text or request.query, notes, wanted)
            rerank_ms = (time.perf_counter() - ranked) * 1000
        moved: set[str] = set()
        if close and self.marks is not None:
            outside = lambda path: self._outside(path, vector, flt)  # noqa: E731
            notes, moved = rerank(notes, close, outside, self.marks, request.k)
        self._read_whole([note.best for note in notes])
        pulled = {one.path: one.similarity for one in close if one.pulls}
        results = [_result(note, text, moved, pulled, reranked) for note in notes]
        searched = time.perf_counter()
        facts = self._facts(request, vector, text, results)
        done = time.perf_counter()
        timings = {"embed": (embedded - started) * 1000, "total": (done - started) * 1000}
        if request.memory:
            timings["memory"] = (done - searched) * 1000
        if reranker is not None:
            timings["rerank"] = rerank_ms
        return SearchResponse(
            query=request.query,
            retrieval_query=text,
            since=since,
            until=until,
            results=results,
            timings_ms=timings,
            memory=facts,
            known=known.result() if known else None,
            reranker=reranker.name if reranker is not None else None,
            model=self.embedder.name,
        )

    def _facts(
        self, request: SearchRequest, vector: Sequence[float], text: str, results: list[SearchResult]
    ) -> list[MemoryMatch]:
        """The confirmed facts close to the query, or to the query under its best note's title (the chat's memory)."""
        if not request.memory or self.memory is None:
            return []
        topic = (lambda: self.embedder.encode_query(f"{results[0].title} : {text}")) if results else None
        return self.memory.matches(self.embedder, vector, topic=topic)

    def _outside(self, path: str, vector: Sequence[float], flt: StoreFilter) -> NoteHit | None:
        """A marked note the search did not rank: its chunk closest to the query (None outside the filters)."""
        hits = self.store.search_dense(vector, flt.model_copy(update={"paths": [path]}), 1, CANDIDATE_FIELDS)
        if not hits:
            return None
        return NoteHit([FusedHit(hits[0], dense_rank=1, dense_score=hits[0].score)], 0.0)

    @property
    def dense_weight(self) -> float:
        return self.calibration.dense_weight

    def _lexical(self, text: str, flt: StoreFilter, by_coverage: bool, english: bool) -> tuple[list[StoreHit], float]:
        """The lexical list and the share of the sparse weight it gets (1.0, or its coverage), beside the dense
        list. An English question's common words stay out of it, and an English best hit weighs what it holds
        of the question (``services.retrieval.crosslingual``)."""
        ignore = META_TERMS | english_common() if english else META_TERMS
        query = lexical.encode_query(text, ignore=ignore)
        sparse = self.store.search_sparse(query, flt, CANDIDATES, CANDIDATE_FIELDS)
        if not (by_coverage or english):
            return sparse, 1.0
        if not sparse:
            return sparse, 0.0
        best = self._text_of(sparse[0])
        if not by_coverage and detect_language(best) != "en":
            return sparse, 1.0  # a French note met by an English question's names and technical words
        return sparse, coverage(text, best, ignore)

    def _text_of(self, hit: StoreHit) -> str:
        """A hit's title and whole chunk text (candidates carry a lean payload)."""
        found = self.store.retrieve([hit.id])
        payload = found[0].payload if found else hit.payload
        return f"{payload.get('title', '')} {payload.get('text', '')}"

    def _known(self, text: str) -> float | None:
        """Share of the query's content words that some chunk of the vault holds, whatever the filters: a
        question from elsewhere is asked in words no note uses (the chat's nearness, ``services.chat.outcome``)."""
        terms = [t for t in query_terms(text) if t not in META_TERMS]
        if not terms:
            return None
        held = [
            self.store.search_sparse(SparseVector(indices=[lexical.term_id(t)], values=[1.0]), None, 1, ("path",))
            for t in terms
        ]
        return sum(bool(hits) for hits in held) / len(terms)

    def _read_whole(self, items: list[FusedHit]) -> None:
        """Replace the lean candidate payloads of the results' chunks by their whole payloads (those the
        reranker already read are not read again)."""
        lean = [item for item in items if "text" not in item.hit.payload]
        if not lean:
            return
        whole = {hit.id: hit.payload for hit in self.store.retrieve([item.hit.id for item in lean])}
        for item in lean:  # a chunk deleted since the search keeps its lean payload (no text)
            item.hit.payload = whole.get(item.hit.id, item.hit.payload)


def _query_and_range(request: SearchRequest) -> tuple[str, datetime | None, datetime | None]:
    if request.since or request.until or not request.parse_dates:
        return request.query, request.since, request.until
    now = request.now or datetime.now().astimezone()
    found = parse_date_range(request.query, now)
    if found is None:
        return request.query, None, None
    return strip_date_expression(request.query, found).strip(), found.start, found.end


def _store_filter(request: SearchRequest, since: datetime | None, until: datetime | None) -> StoreFilter:
    """The request's filters as the store reads them: tags lowercase without ``#``, folders without
    outer slashes, the date range as timestamps."""
    return StoreFilter(
        tags=[t.lower().lstrip("#") for t in request.tags],
        folders=[f.strip("/") for f in request.folders],
        types=request.types,
        since=since.timestamp() if since else None,
        until=until.timestamp() if until else None,
        entities=request.entities,
    )


def _result(
    note: NoteHit,
    query: str,
    moved: frozenset[str] | set[str] = frozenset(),
    pulled: dict[str, float] | None = None,
    reranked: dict[str, float] | None = None,
) -> SearchResult:
    """``moved``: the paths the marks reordered; ``pulled``: the cosine of the recorded question that pulled each;
    ``reranked``: the reranker's score of each note it read."""
    item = note.best
    payload = item.hit.payload
    path = payload["path"]
    return SearchResult(
        path=path,
        title=payload.get("title", ""),
        score=round(note.score, 6),
        rank_score=round(note.rank, 6),
        heading=" > ".join(payload.get("heading_path", [])),
        snippet=snippet(payload.get("text", ""), query),
        text=payload.get("text", ""),
        dense_score=item.hit.score if item.dense_rank is not None else None,
        chunk_index=payload.get("chunk_index", 0),
        note_type=payload.get("type", "note"),
        dense_rank=item.dense_rank,
        sparse_rank=item.sparse_rank,
        sparse_score=item.sparse_score,
        title_match=item.title_match,
        title_similarity=round(note.title_similarity, 4) if note.title_similarity is not None else None,
        matched_terms=lexical.matched_terms(query, payload.get("text", "")),
        page=payload.get("page"),
        ocr=payload.get("ocr"),
        ocr_confidence=payload.get("ocr_confidence"),
        ocr_low=bool(payload.get("ocr_low")),
        learned=path in moved,
        learned_similarity=(pulled or {}).get(path) if path in moved else None,
        rerank_score=round(reranked[path], 4) if reranked and path in reranked else None,
    )
