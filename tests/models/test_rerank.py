"""The reranker in the search (issue #33): chosen with `obsirag model use`, it reads at most 30 notes per
search from the top of the fused list, orders them by its score, and the search reports its name and time;
turned off, the search ranks exactly as before. A real Edge index of the sample vault with e5; the reranker is
a tiny random cross-encoder pulled from the local hub (its scores mean nothing, its loading and use are real)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.choices import ChosenModels, write_choices
from services.config import MULTILINGUAL_EMBEDDING_MODEL, Settings
from services.indexing.pipeline import IndexPipeline
from services.indexing.reconcile import changed_paths
from services.models.pull import pull
from services.retrieval.embedding import Embedder
from services.retrieval.reranker import ChosenReranker, CrossEncoderReranker
from services.retrieval.search import SearchEngine, SearchRequest, SearchResponse
from services.retrieval.store import EdgeStore
from tests.conftest import copy_sample_vault
from tests.support.hub import Hub
from tests.support.hub_fixtures import RERANKER
from tests.support.system import seed_sample_caches
from workers.cli_output import print_results, search_json

QUESTIONS = ["Comment faire pousser des tomates sur un balcon ?", "budget du projet Atlas", "how do I bake bread"]


@pytest.fixture(scope="module")
def indexed(
    tmp_path_factory: pytest.TempPathFactory, e5_embedder: Embedder, sample_caches: Path, hub: Hub
) -> Iterator[tuple[Settings, SearchEngine]]:
    root = tmp_path_factory.mktemp("rerank")
    copy_sample_vault(root / "vault")
    settings = Settings(
        _env_file=None,
        vault=root / "vault",
        data_root=root,
        data_dir=root / "data",
        embedding_model=MULTILINGUAL_EMBEDDING_MODEL,
    )
    seed_sample_caches(settings, sample_caches)
    pipeline = IndexPipeline(settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), e5_embedder)
    pipeline.sync_paths(changed_paths(settings, pipeline.catalog))
    pull(RERANKER, settings.model_cache, endpoint=hub.url)
    yield settings, SearchEngine(pipeline.store, e5_embedder, rerankers=ChosenReranker(settings))
    pipeline.store.close()
    pipeline.catalog.close()


def search_all(engine: SearchEngine) -> list[SearchResponse]:
    return [engine.search(SearchRequest(query=question, k=8)) for question in QUESTIONS]


def test_the_chosen_reranker_orders_at_most_30_notes_and_off_restores_the_ranking_exactly(
    indexed: tuple[Settings, SearchEngine], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    settings, engine = indexed
    before = search_all(engine)
    assert all(r.reranker is None and "rerank" not in r.timings_ms for r in before)
    read: list[int] = []
    score = CrossEncoderReranker.score
    monkeypatch.setattr(CrossEncoderReranker, "score", lambda self, q, p: read.append(len(p)) or score(self, q, p))

    write_choices(settings.data_dir, ChosenModels(rerank_model=RERANKER))  # what `obsirag model use` writes
    reranked = search_all(engine)
    assert len(read) == len(QUESTIONS) and all(0 < n <= 30 for n in read) and max(read) > 8  # past the k shown
    for response in reranked:
        scores = [r.rerank_score for r in response.results]
        assert response.reranker == RERANKER and response.timings_ms["rerank"] > 0
        assert None not in scores and scores == sorted(scores, reverse=True)  # in the reranker's order
    hits = search_json(reranked[0])
    assert [hit["rerank_score"] for hit in hits] == [r.rerank_score for r in reranked[0].results]
    print_results(reranked[0], explain=True)
    said = capsys.readouterr().out
    assert f"ordre du reranker {RERANKER} (" in said and f"({reranked[0].results[0].rerank_score:.4f})" in said
    assert [r.path for r in reranked[0].results] != [r.path for r in before[0].results] or any(
        [r.path for r in a.results] != [r.path for r in b.results] for a, b in zip(before, reranked, strict=True)
    )  # it did reorder something

    write_choices(settings.data_dir, ChosenModels(rerank_model=""))  # `obsirag model use none`
    after = search_all(engine)
    assert len(read) == len(QUESTIONS)  # not asked again
    for old, new in zip(before, after, strict=True):
        assert new.reranker is None and [r.model_dump() for r in new.results] == [r.model_dump() for r in old.results]
        assert all("rerank_score" not in hit for hit in search_json(new))


def test_a_reranker_whose_files_are_gone_is_skipped_and_the_search_answers(
    indexed: tuple[Settings, SearchEngine],
) -> None:
    settings, engine = indexed
    write_choices(settings.data_dir, ChosenModels(rerank_model="nobody/gone"))
    response = engine.search(SearchRequest(query=QUESTIONS[0], k=5))
    assert response.reranker is None and response.results
    write_choices(settings.data_dir, ChosenModels(rerank_model=""))
