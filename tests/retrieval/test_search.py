"""SearchEngine on a stub store: score fusion, grouping by note and the --explain fields of each hit."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import pytest

from services.retrieval import fusion, search
from services.retrieval.lexical import encode_query, term_id
from services.retrieval.models import SparseVector, StoreFilter, StoreHit
from services.retrieval.query_terms import query_terms
from services.retrieval.search import SearchEngine, SearchRequest

NOW = datetime(2026, 11, 29, 12, 0).astimezone()


def hit(point: str, score: float, path: str, title: str, text: str, chunk: int = 0) -> StoreHit:
    payload = {"path": path, "title": title, "text": text, "chunk_index": chunk, "heading_path": []}
    return StoreHit(id=point, score=score, payload=payload)


class StubStore:
    """Fixed dense and sparse lists; remembers what it was asked. Candidates come back with the payload
    keys asked for, ``retrieve`` with the whole payload, like the real stores."""

    def __init__(
        self, dense: list[StoreHit], sparse: list[StoreHit], titles: dict[str, list[float]] | None = None
    ) -> None:
        self.dense, self.sparse, self.titles = dense, sparse, titles or {}
        self.limits: list[int] = []
        self.fields: list[tuple[str, ...] | None] = []
        self.sparse_queries: list[SparseVector] = []
        self.title_requests: list[list[str]] = []
        self.retrieved: list[list[str]] = []

    def _lean(self, hits: list[StoreHit], fields: tuple[str, ...] | None) -> list[StoreHit]:
        self.fields.append(fields)
        if fields is None:
            return hits
        return [replace(h, payload={k: v for k, v in h.payload.items() if k in fields}) for h in hits]

    def search_dense(
        self, vector: list[float], flt: StoreFilter | None, limit: int, fields: tuple[str, ...] | None = None
    ) -> list[StoreHit]:
        self.limits.append(limit)
        return self._lean(self.dense[:limit], fields)

    def search_sparse(
        self, sparse: SparseVector, flt: StoreFilter | None, limit: int, fields: tuple[str, ...] | None = None
    ) -> list[StoreHit]:
        self.sparse_queries.append(sparse)
        return self._lean(self.sparse[:limit], fields)

    def retrieve(self, ids: list[str]) -> list[StoreHit]:
        self.retrieved.append(list(ids))
        by_id = {h.id: h for h in self.dense + self.sparse}
        return [replace(by_id[i]) for i in ids if i in by_id]

    def title_vectors(self, ids: list[str]) -> dict[str, list[float]]:
        self.title_requests.append(list(ids))
        return {i: self.titles[i] for i in ids if i in self.titles}


class StubEmbedder:
    name = "stub"  # an unmeasured model: the default calibration (dense weight 0.3)

    def encode_query(self, text: str) -> list[float]:
        return [1.0, 0.0]


@pytest.fixture
def store() -> StubStore:
    dense = [
        hit("a1", 0.80, "A.md", "Cuisine", "Recette du levain et du pain."),
        hit("b1", 0.79, "B.md", "Jardin", "Planter des tomates en mai."),
        hit("a2", 0.70, "A.md", "Cuisine", "Le four à pain chauffe."),
        hit("c1", 0.40, "C.md", "Levain", "Nourrir le levain chaque jour."),
    ]
    sparse = [
        hit("c1", 9.0, "C.md", "Levain", "Nourrir le levain chaque jour."),
        hit("a1", 2.0, "A.md", "Cuisine", "Recette du levain et du pain."),
        hit("b1", 1.0, "B.md", "Jardin", "Planter des tomates en mai."),
    ]
    return StubStore(dense, sparse)


def test_search_fuses_by_score_and_groups_by_note(store: StubStore) -> None:
    response = SearchEngine(store, StubEmbedder()).search(SearchRequest(query="nourrir chaque jour", now=NOW))
    assert store.limits == [search.CANDIDATES]
    dense, sparse, second = fusion.DENSE_WEIGHT, fusion.SPARSE_WEIGHT, fusion.SECOND_CHUNK_WEIGHT
    # Min-max normalised: dense a1 1.0, b1 0.975, a2 0.75, c1 0.0; sparse c1 1.0, a1 0.125, b1 0.0.
    # A.md also gets a share of its second chunk (a2); no title vectors here, so no title term.
    expected = {"A.md": dense * 1.0 + sparse * 0.125 + second * dense * 0.75, "B.md": dense * 0.975, "C.md": sparse}
    assert [r.path for r in response.results] == sorted(expected, key=lambda path: -expected[path])
    assert {r.path: r.score for r in response.results} == pytest.approx(expected)
    note_a = next(r for r in response.results if r.path == "A.md")
    assert (note_a.dense_rank, note_a.sparse_rank, note_a.chunk_index) == (1, 2, 0)  # its best chunk, a1
    # Lean candidates, then the results' chunks read whole: their text is what the chat engine packs.
    assert store.fields == [search.CANDIDATE_FIELDS, search.CANDIDATE_FIELDS]
    assert store.retrieved == [["c1", "a1", "b1"]] and note_a.text == "Recette du levain et du pain."


def test_results_carry_what_explain_shows(store: StubStore) -> None:
    response = SearchEngine(store, StubEmbedder()).search(SearchRequest(query="nourrir le levain", now=NOW))
    levain = next(r for r in response.results if r.path == "C.md")
    assert (levain.dense_rank, levain.sparse_rank) == (4, 1)
    assert levain.dense_score == pytest.approx(0.40)
    assert levain.sparse_score == pytest.approx(9.0)
    assert levain.matched_terms == ["nourr", "levain"]
    jardin = next(r for r in response.results if r.path == "B.md")
    assert (jardin.sparse_rank, jardin.sparse_score, jardin.matched_terms) == (3, 1.0, [])


def test_a_named_title_gets_the_bonus(store: StubStore) -> None:
    response = SearchEngine(store, StubEmbedder()).search(SearchRequest(query="levain", now=NOW))
    top = response.results[0]
    assert (top.path, top.title_match) == ("C.md", True)
    assert not any(r.title_match for r in response.results[1:])


def test_the_sparse_query_is_the_lexical_encoding_without_date_words(store: StubStore) -> None:
    SearchEngine(store, StubEmbedder()).search(SearchRequest(query="levain la semaine dernière", now=NOW))
    assert store.sparse_queries == [encode_query("levain")]


def test_a_note_whose_title_embedding_is_close_to_the_query_moves_up() -> None:
    # Two notes equal on both lists; only their title vectors differ (the query embeds to [1, 0]).
    dense = [hit("x1", 0.5, "X.md", "Far", "même texte"), hit("y1", 0.5, "Y.md", "Close", "même texte")]
    store = StubStore(dense, [], titles={"x1": [0.0, 1.0], "y1": [0.8, 0.6]})
    results = SearchEngine(store, StubEmbedder()).search(SearchRequest(query="question", now=NOW)).results
    assert store.title_requests == [["x1", "y1"]]  # one request, for the best chunk of each note
    assert [r.path for r in results] == ["Y.md", "X.md"]
    assert [r.title_similarity for r in results] == pytest.approx([0.8, 0.0])
    assert results[0].score - results[1].score == pytest.approx(fusion.TITLE_WEIGHT * 0.8)


def test_points_without_a_title_vector_rank_on_their_chunks_alone(store: StubStore) -> None:
    results = SearchEngine(store, StubEmbedder()).search(SearchRequest(query="levain", now=NOW)).results
    assert all(r.title_similarity is None for r in results)


def test_a_lexical_best_hit_matching_a_stray_word_weighs_what_it_matched() -> None:
    # The lexical list's best hit shares one word with the question: "partagé" of four, "shared" of five.
    dense = [hit("x1", 0.9, "X.md", "Potager", "Six voisins cultivent la parcelle."), hit("y1", 0.5, "Y.md", "", "")]
    sparse = [hit("y1", 7.0, "Y.md", "Drive", "Le drive partagé de l'équipe."), hit("x1", 1.0, "X.md", "", "")]
    engine = SearchEngine(StubStore(dense, sparse), StubEmbedder())
    french = SearchRequest(query="combien de voisins cultivent la parcelle partagée", now=NOW)
    assert engine.search(french).results[0].path == "Y.md"  # min-max makes any best lexical hit 1.0
    engine.calibration = replace(engine.calibration, sparse_by_coverage=True)
    assert engine.search(french).results[0].path == "X.md"  # it matched "partagé" only: 1/4 of the terms
    # An English question always weighs its lexical list so (over French notes, its words seldom meet).
    sparse = [hit("y1", 7.0, "Y.md", "Shared drive", "The shared drive of the team."), hit("x1", 1.0, "X.md", "", "")]
    engine = SearchEngine(StubStore(dense, sparse), StubEmbedder())
    english = SearchRequest(query="how many neighbours tend the shared garden plot", now=NOW)
    assert engine.search(english).results[0].path == "X.md"
    assert query_terms(english.query) == ["neighbour", "tend", "shar", "garden", "plot"]
    # ...when its best hit is English: a French note it meets by a name or a technical word keeps the weight.
    sparse = [hit("y1", 7.0, "Y.md", "Drive", "Le shared drive de l'équipe, dans la note du mois."), sparse[1]]
    engine = SearchEngine(StubStore(dense, sparse), StubEmbedder())
    assert engine.search(english).results[0].path == "Y.md"


def test_an_english_question_s_common_words_stay_out_of_its_lexical_query(store: StubStore) -> None:
    engine = SearchEngine(store, StubEmbedder())
    engine.search(SearchRequest(query="What did I learn about keeping a sourdough starter alive?", now=NOW))
    engine.search(SearchRequest(query="comment keeping garder le levain", now=NOW))  # French: all its words stay
    english, french = ({*query.indices} for query in store.sparse_queries)
    assert term_id("keep") not in english and {term_id(t) for t in ("learn", "sourdough")} <= english
    assert {term_id(t) for t in ("keep", "gard", "levain")} <= french


def test_the_order_s_title_weight_reorders_the_results_but_not_the_chat_s_guard_order() -> None:
    # X leads on its chunk, Y on its title: a model whose order weighs titles more puts Y first, each
    # result's ``score`` stays fused + title_weight × cosine, and the chat's search keeps the fused order.
    dense = [hit("x1", 0.9, "X.md", "Far", "texte"), hit("y1", 0.5, "Y.md", "Close", "texte")]
    store = StubStore(dense, [], titles={"x1": [0.6, 0.8], "y1": [0.8, 0.6]})
    engine = SearchEngine(store, StubEmbedder())
    engine.calibration = replace(engine.calibration, order_title_weight=5.0)
    shown = engine.search(SearchRequest(query="question", now=NOW)).results
    assert [r.path for r in shown] == ["Y.md", "X.md"]  # 0.3 × 0 + 5 × 0.8 > 0.3 × 1 + 5 × 0.6
    assert [r.rank_score for r in shown] == pytest.approx([4.0, 3.3])
    assert [r.score for r in shown] == pytest.approx([fusion.TITLE_WEIGHT * 0.8, 0.3 + fusion.TITLE_WEIGHT * 0.6])
    guarded = engine.search(SearchRequest(query="question", now=NOW, guard_order=True)).results
    assert [r.path for r in guarded] == ["X.md", "Y.md"] and [r.score for r in guarded] == [
        r.score for r in shown[::-1]
    ]


def test_words_naming_the_vault_are_left_out_of_the_lexical_query(store: StubStore) -> None:
    """ "notes", "vault", "coffre" say where to look, not what about: they would match every note titled "… notes"."""
    engine = SearchEngine(store, StubEmbedder())
    for query in ("my favourite notes in the vault", "mes notes préférées du coffre"):
        engine.search(SearchRequest(query=query, now=NOW))
        terms = set(store.sparse_queries[-1].indices)
        assert not {term_id(t) for t in ("not", "t:not", "vault", "t:vault", "coffr", "t:coffr")} & terms
        assert {term_id("favourit"), term_id("prefer")} & terms  # the topic stays
