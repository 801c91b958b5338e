"""The indexing pipeline in-process, on a real Edge store, catalog and embedding model."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from services.catalog import Catalog
from services.catalog.models import NoteStatus
from services.config import Settings
from services.indexing.context import note_summary
from services.indexing.pipeline import IndexPipeline
from services.indexing.reconcile import changed_paths
from services.retrieval.embedding_cache import EmbeddingCache
from services.retrieval.models import StoreFilter
from services.retrieval.search import SearchEngine, SearchRequest
from services.retrieval.store import INDEX_LAYOUT, EdgeStore, ModelRecord
from services.vault import read_note
from services.vault.models import NoteType
from tests.conftest import tree_hashes

NOW = datetime(2026, 11, 29, 15, 0).astimezone()


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory, embedder, sample_caches: Path) -> EmbeddingCache:
    """One embedding cache for the module's pipelines, a copy of the run's sample-vault cache: the sample vault
    went through the model once for the whole run (``sample_caches``)."""
    path = tmp_path_factory.mktemp("cache") / "embeddings.sqlite3"
    shutil.copyfile(sample_caches / path.name, path)
    return EmbeddingCache(path, embedder.name, embedder.dim)


@pytest.fixture
def pipeline(settings: Settings, embedder, shared_cache: EmbeddingCache) -> IndexPipeline:
    store, catalog = EdgeStore(settings.store_path), Catalog(settings.catalog_path)
    pipe = IndexPipeline(settings, store, catalog, embedder, shared_cache)
    yield pipe
    pipe.store.close()
    pipe.catalog.close()


def index_all(pipeline: IndexPipeline):
    return pipeline.sync_paths(changed_paths(pipeline.settings, pipeline.catalog))


def write(vault: Path, rel: str, text: str | bytes) -> None:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def test_full_index_then_unchanged_vault_embeds_nothing(pipeline: IndexPipeline, vault: Path) -> None:
    before = tree_hashes(vault)
    first = index_all(pipeline)
    assert len(first.indexed) >= 30 and not first.failed
    assert first.chunks_embedded + first.chunks_cached == pipeline.store.count() > len(first.indexed)

    again = index_all(pipeline)
    assert again.chunks_embedded == 0 and not again.indexed

    # Touching a file (new mtime, same bytes) costs a read, never an embedding.
    some = vault / first.indexed[0]
    some.touch()
    touched = index_all(pipeline)
    assert touched.unchanged == [first.indexed[0]] and touched.chunks_embedded == 0
    assert tree_hashes(vault) == before


def test_edit_replaces_chunks_and_deletes_stale_ones(pipeline: IndexPipeline, vault: Path) -> None:
    long_text = "# Long\n\n" + "\n\n".join(f"Paragraphe {i} sur la photosynthèse des algues." * 12 for i in range(12))
    write(vault, "Tests/long.md", long_text)
    pipeline.sync_paths(["Tests/long.md"])
    many = len(pipeline.store.point_ids("Tests/long.md"))
    assert many > 2
    write(vault, "Tests/long.md", "# Court\n\nUne seule phrase sur les volcans d'Auvergne.")
    report = pipeline.sync_paths(["Tests/long.md"])
    assert report.indexed == ["Tests/long.md"]
    hits = pipeline.store.scroll(StoreFilter(paths=["Tests/long.md"]))
    assert [h.payload["chunk_index"] for h in hits] == [0]
    assert pipeline.catalog.get_note("Tests/long.md").chunk_count == 1


def test_bad_input_is_recorded_and_the_rest_continues(pipeline: IndexPipeline, vault: Path) -> None:
    write(vault, "Bad/invalid-yaml.md", "---\ntitle: [unclosed\ntags: : :\n---\n# Survivant\n\nLe corps reste indexé.")
    write(vault, "Bad/binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 20)
    write(vault, "Bad/huge.md", "# Énorme\n\n" + ("mot " * 5_300_000))  # ~21 MB
    write(vault, "Bad/latin1.md", "# Café crème\n\nÉté à Noël, façon déjà vu.".encode("latin-1"))
    write(vault, "Bad/empty.md", "")
    write(vault, "Bad/ok.md", "# Fine\n\nA perfectly normal note about tidal energy.")
    report = pipeline.sync_paths(
        [f"Bad/{name}.md" for name in ("invalid-yaml", "binary", "huge", "latin1", "empty", "gone", "ok")]
    )
    catalog = pipeline.catalog
    invalid = catalog.get_note("Bad/invalid-yaml.md")
    assert invalid.status == NoteStatus.INDEXED and "yaml" in invalid.message.lower()
    assert catalog.get_note("Bad/binary.md").status == NoteStatus.SKIPPED
    assert "binary" in catalog.get_note("Bad/binary.md").message
    huge = catalog.get_note("Bad/huge.md")
    assert huge.status == NoteStatus.SKIPPED and "MB" in huge.message
    latin = catalog.get_note("Bad/latin1.md")
    assert latin.status == NoteStatus.INDEXED and latin.title == "Café crème"
    assert catalog.get_note("Bad/empty.md").status == NoteStatus.INDEXED
    assert catalog.get_note("Bad/gone.md") is None and "Bad/gone.md" in report.deleted
    assert "Bad/ok.md" in report.indexed and not report.failed
    texts = [h.payload["text"] for h in pipeline.store.scroll(StoreFilter(paths=["Bad/latin1.md"]))]
    assert any("façon déjà vu" in t for t in texts)


def test_deleted_and_excluded_notes_leave_the_index(pipeline: IndexPipeline, vault: Path) -> None:
    index_all(pipeline)
    victim = next(iter(pipeline.catalog.note_states()))
    (vault / victim).unlink()
    assert changed_paths(pipeline.settings, pipeline.catalog) == [victim]
    report = index_all(pipeline)
    assert report.deleted == [victim]
    assert pipeline.store.point_ids(victim) == set() and pipeline.catalog.get_note(victim) is None


def test_date_filtered_search_returns_only_notes_in_range(pipeline: IndexPipeline, vault: Path, embedder) -> None:
    monday = (NOW - timedelta(days=NOW.weekday())).date()
    wednesday = monday + timedelta(days=2)
    write(vault, "Dates/recent.md", f"---\ndate: {wednesday}\n---\n# Rucher\n\nJ'ai écrit sur mes abeilles.")
    write(vault, "Dates/old.md", "---\ndate: 2026-09-02\n---\n# Rucher ancien\n\nJ'ai écrit sur mes abeilles aussi.")
    write(vault, "Dates/older.md", "---\ncreated: 2025-01-10\n---\n# Essaim\n\nLes abeilles et la ruche.")
    pipeline.sync_paths(["Dates/recent.md", "Dates/old.md", "Dates/older.md"])
    engine = SearchEngine(pipeline.store, embedder)
    response = engine.search(SearchRequest(query="ce que j'ai écrit cette semaine sur les abeilles", now=NOW))
    paths = [r.path for r in response.results]
    assert "Dates/recent.md" in paths
    assert "Dates/old.md" not in paths and "Dates/older.md" not in paths
    assert response.since is not None and response.since.date() == monday
    everything = engine.search(SearchRequest(query="abeilles ruche", now=NOW))
    assert {"Dates/recent.md", "Dates/old.md", "Dates/older.md"} <= {r.path for r in everything.results}


def test_links_are_resolved_in_the_catalog(pipeline: IndexPipeline, vault: Path) -> None:
    write(vault, "Links/source.md", "# Source\n\nVoir [[cible|la cible]] et [[Inexistante]].")
    pipeline.sync_paths(["Links/source.md"])
    assert [link.target_path for link in pipeline.catalog.outlinks("Links/source.md")] == [None, None]
    write(vault, "Links/Cible.md", "# Cible\n\nJe suis la cible.")
    pipeline.sync_paths(["Links/Cible.md"])
    targets = [link.target_path for link in pipeline.catalog.outlinks("Links/source.md")]
    assert targets == ["Links/Cible.md", None]
    assert [link.source for link in pipeline.catalog.backlinks("Links/Cible.md")] == ["Links/source.md"]


def test_every_chunk_carries_its_note_summary_embedding(pipeline: IndexPipeline, embedder) -> None:
    index_all(pipeline)
    hits = pipeline.store.search_dense(embedder.encode_query("objectifs du projet Atlas"), None, 50)
    titles = pipeline.store.title_vectors([hit.id for hit in hits])
    assert len(titles) == len(hits)  # every chunk has one
    atlas = [hit for hit in hits if hit.payload["path"] == "Projets/Projet Atlas.md"]
    note = read_note(pipeline.settings.vault, "Projets/Projet Atlas.md", 10**6)
    assert note_summary(note).startswith("Projet Atlas\nAtlas, Projet cartographie\n")  # title, aliases, headings
    expected = embedder.encode([note_summary(note)])[0]
    assert len(atlas) > 1
    stored = {tuple(titles[hit.id]) for hit in atlas}
    assert len(stored) == 1  # the same vector on each chunk of the note...
    # ...the summary's own embedding (bfloat16 layers round a text a little differently in another batch)
    assert float(np.asarray(stored.pop()) @ expected) > 0.9999


def test_an_index_of_an_older_layout_is_rebuilt_at_start(settings: Settings, embedder, shared_cache) -> None:
    first = IndexPipeline(
        settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), embedder, shared_cache
    )
    assert index_all(first).indexed
    first.store.close()
    first.catalog.close()
    model_file = settings.store_path / "model.json"  # what ObsiRAG before the title vector recorded
    model_file.write_text(json.dumps({"model_name": embedder.name, "dim": embedder.dim}))

    again = IndexPipeline(
        settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), embedder, shared_cache
    )
    try:
        assert again.store.recorded_model() == ModelRecord(embedder.name, embedder.dim, INDEX_LAYOUT)
        assert again.store.count() == 0 and again.catalog.note_count() == 0  # forgotten, to be rebuilt
        report = index_all(again)
        # Rebuilt from the embedding cache: the same model's vectors of the same texts.
        assert report.indexed and report.chunks_embedded == 0 and report.chunks_cached == again.store.count()
    finally:
        again.store.close()
        again.catalog.close()


def test_nothing_is_embedded_twice(pipeline: IndexPipeline, settings: Settings, embedder, vault: Path) -> None:
    """Once a chunk's text went through the model: a folder rename, a rebuild, a lost catalog embed nothing."""
    pipe, store = pipeline, pipeline.store
    first = index_all(pipe)
    count = store.count()
    assert first.chunks_embedded + first.chunks_cached == count
    texts = [h.payload["text"] for h in store.scroll(StoreFilter(paths=["Cuisine/Ratatouille.md"]))]

    (vault / "Cuisine").rename(vault / "Recettes")
    renamed = index_all(pipe)
    moved = [p for p in renamed.indexed if p.startswith("Recettes/")]
    assert len(moved) == 5 and renamed.chunks_embedded == 0 and renamed.chunks_cached > 0
    assert set(renamed.deleted) >= {p.replace("Recettes/", "Cuisine/") for p in moved}
    moved_texts = [h.payload["text"] for h in store.scroll(StoreFilter(paths=["Recettes/Ratatouille.md"]))]
    assert sorted(moved_texts) == sorted(texts) and store.count() == count

    pipe.rebuild()  # what a reindex with the same model does
    assert index_all(pipe).chunks_embedded == 0 and store.count() == count
    store.close()
    pipe.catalog.close()
    # A crash after the model ran but before the catalog was written: the catalog knows nothing.
    settings.catalog_path.unlink()
    catalog = Catalog(settings.catalog_path)
    again = IndexPipeline(settings, EdgeStore(settings.store_path), catalog, embedder, pipe.cache)
    try:
        report = index_all(again)
        assert report.indexed and report.chunks_embedded == 0 and report.chunks_cached == again.store.count()
    finally:
        again.store.close()
        catalog.close()


def test_the_cache_bounds_the_unused_texts_and_keeps_those_notes_use(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "e.sqlite3", "m", 3, max_entries=4)
    texts = ["un", "deux", "trois"]
    cache.store(texts, np.eye(3, dtype=np.float32), now=100.0)
    cache.record_uses("a.md", ["un", "deux"])
    assert set(cache.lookup(["deux", "trois", "quatre"], now=100.0)) == {0, 1}
    assert cache.prune(now=150.0, grace=100.0) == 0  # "trois" unused, but within the grace
    assert cache.prune(now=300.0, grace=100.0) == 1 and set(cache.lookup(texts, now=300.0)) == {0, 1}
    cache.forget_uses("a.md")
    cache.store(["cinq", "six", "sept", "huit"], np.ones((4, 3), dtype=np.float32), now=400.0)
    assert cache.prune(now=400.0, grace=1000.0) == 2 and cache.count() == 4  # the oldest went
    assert set(cache.lookup(["un", "deux", "cinq"], now=400.0)) == {2}
    cache.record_uses("b.md", ["cinq", "six", "sept", "huit"])
    cache.store(["neuf"], np.ones((1, 3), dtype=np.float32), now=500.0)
    cache.max_entries = 1
    assert cache.prune(now=500.0, grace=1000.0) == 0  # over the bound, but the notes use them: they stay
    cache.store(["dix"], np.ones((1, 3), dtype=np.float32), now=600.0)
    assert cache.prune(now=600.0, grace=1000.0) == 1 and cache.count() == 5  # two unused above 1: the oldest
    assert set(cache.lookup(["neuf", "dix"], now=600.0)) == {1}
    other = EmbeddingCache(tmp_path / "e.sqlite3", "another-model", 3)
    assert other.lookup(["cinq"]) == {}  # keyed by model too


def test_the_briefing_and_the_profile_are_found_under_their_own_note_types(
    pipeline: IndexPipeline, settings: Settings, embedder
) -> None:
    from services.catalog.memory_models import Fact, FactKind, FactSource
    from services.memory.briefing import write_briefing
    from services.memory.facts import Policy, file_fact
    from services.memory.profile import sync_profile
    from services.memory.reminders import parse_reminder, save_reminder

    catalog = pipeline.catalog
    save_reminder(catalog, parse_reminder("rappelle-moi demain de relancer la mairie", NOW), NOW)  # type: ignore[arg-type]
    fact = Fact(
        subject="moi",
        predicate="préfère",
        value="le thé vert au café",
        kind=FactKind.PREFERENCE,
        source=FactSource.CHAT,
        created_at=NOW,
        updated_at=NOW,
        last_seen=NOW,
    )
    file_fact(catalog, fact, Policy.from_settings(settings), NOW)
    sync_profile(catalog, settings.vault, Policy.from_settings(settings), NOW)
    briefing = write_briefing(settings, catalog, None, NOW + timedelta(days=1))
    assert briefing is not None
    pipeline.sync_paths([briefing.path, "obsirag/assistant/Profil.md"])
    engine = SearchEngine(pipeline.store, embedder)

    def found(query: str, note_type: NoteType) -> list[str]:
        return [r.path for r in engine.search(SearchRequest(query=query, types=[note_type])).results]

    assert found("relancer la mairie", NoteType.BRIEFING) == [briefing.path]
    assert found("thé vert", NoteType.PROFILE) == ["obsirag/assistant/Profil.md"]
    assert briefing.path not in found("relancer la mairie", NoteType.NOTE)
