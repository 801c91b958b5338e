"""A rebuild beside the live index (services/indexing/rebuild.py): search answers throughout, the switch is atomic."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from services.catalog import Catalog
from services.config import BUNDLED_EMBEDDING_MODEL, MULTILINGUAL_EMBEDDING_MODEL, Settings
from services.indexing.pipeline import IndexPipeline
from services.indexing.rebuild import Rebuild, open_index
from services.indexing.rebuild_record import NOTES_FILE, PROGRESS_FILE, read_progress
from services.indexing.reconcile import changed_paths
from services.retrieval.search import SearchEngine, SearchRequest
from services.retrieval.store import EdgeStore, ModelRecord
from services.retrieval.store.edge_folder import NEXT_DIR, SWITCH_FILE, recorded_model_at
from services.retrieval.store.server import ClientStore

NOTES = {
    "Cuisine/Pain.md": "# Pain au levain\n\nLe levain nourri la veille donne une mie alvéolée.",
    "Voyage/Lisbonne.md": "# Lisbonne\n\nLes tramways jaunes montent vers l'Alfama.",
    "Jardin/Tomates.md": "# Tomates\n\nOn taille les gourmands des tomates chaque semaine.",
    "Tech/Rust.md": "# Rust\n\nLe borrow checker refuse deux références mutables.",
    "Lectures/Camus.md": "# La Peste\n\nOran, une ville ordinaire frappée par l'épidémie.",
}


@pytest.fixture
def small(tmp_path: Path) -> Settings:
    for rel, text in NOTES.items():
        (tmp_path / "vault" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "vault" / rel).write_text(text, encoding="utf-8")
    return Settings(vault=tmp_path / "vault", data_dir=tmp_path / "data", index_batch_notes=2)


def build_with_minilm(settings: Settings) -> None:
    minilm = settings.model_copy(update={"embedding_model": BUNDLED_EMBEDDING_MODEL})
    pipeline, _engine, _configured, rebuild = open_index(minilm)
    assert rebuild is None
    pipeline.sync_paths(changed_paths(settings, pipeline.catalog))
    pipeline.store.close()
    pipeline.catalog.close()


def first_hit(engine, query: str) -> str:
    return engine.search(SearchRequest(query=query, k=3)).results[0].path


def test_a_model_change_rebuilds_beside_the_live_index(small: Settings, embedder) -> None:
    build_with_minilm(small)
    pipeline, engine, configured, rebuild = open_index(small)  # the default model is configured
    try:
        assert configured.name == MULTILINGUAL_EMBEDDING_MODEL and rebuild is not None
        assert pipeline.embedder.name == engine.embedder.name == BUNDLED_EMBEDDING_MODEL  # the live index's own
        steps = 0
        while not rebuild.step(small.index_batch_notes):
            steps += 1
            # Meanwhile the live index answers, with its model, and follows the vault.
            assert recorded_model_at(small.store_path).name == BUNDLED_EMBEDDING_MODEL
            assert first_hit(engine, "tramways jaunes Alfama") == "Voyage/Lisbonne.md"
            assert read_progress(small.store_path).done == min(2 * steps, len(NOTES))
            if steps == 1:  # an edit of a note the rebuild already did: redone before the switch
                done = next(p for p in rebuild.pipeline.hashes if p in NOTES)
                (small.vault / done).write_text("# Volcans\n\nLe puy de Dôme domine Clermont.", encoding="utf-8")
                assert pipeline.sync_paths([done]).indexed == [done]
        assert steps >= 3 and not (small.store_path / NEXT_DIR).exists()
        assert pipeline.store.recorded_model() == ModelRecord(MULTILINGUAL_EMBEDDING_MODEL, 384)
        assert engine.embedder.name == MULTILINGUAL_EMBEDDING_MODEL and read_progress(small.store_path) is None
        assert first_hit(engine, "quel volcan domine Clermont ?") == done
        assert pipeline.store.count() == len(NOTES)
        # A same-model reindex afterwards: every vector from the cache.
        again = Rebuild.start(small, pipeline, configured)
        while not again.step(10):
            pass
        assert again.state.embedded == 0 and first_hit(engine, "tramways jaunes") == "Voyage/Lisbonne.md"
    finally:
        pipeline.store.close()
        pipeline.catalog.close()


def test_a_rebuild_lists_the_vault_per_pass_not_per_step_and_follows_it_meanwhile(
    small: Settings, embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # At 20,000 notes each step listed the vault and stat'ed every done note: longer than the step itself.
    build_with_minilm(small)
    pipeline, engine, _configured, rebuild = open_index(small)
    listed = Rebuild._vault_paths
    listings: list[int] = []
    monkeypatch.setattr(Rebuild, "_vault_paths", lambda self: listings.append(1) or listed(self))
    try:
        assert not rebuild.step(1)
        done = next(iter(rebuild.pipeline.hashes))
        waiting = next(p for p in NOTES if p not in rebuild.pipeline.hashes)
        created = "Géologie/Volcans.md"
        (small.vault / created).parent.mkdir()
        (small.vault / created).write_text("# Volcans\n\nLe puy de Dôme domine Clermont.", encoding="utf-8")
        for gone in (done, waiting):
            (small.vault / gone).unlink()
        pipeline.sync_paths([created, done, waiting])  # the live index follows the vault meanwhile
        steps = 1
        while not rebuild.step(1):
            steps += 1
        assert len(listings) <= 3 < steps  # a pass over what was listed, then one for what came meanwhile
        paths = {hit.path for hit in engine.search(SearchRequest(query="puy de Dôme Clermont", k=10)).results}
        assert created in paths and not {done, waiting} & paths
        assert pipeline.store.count() == len(NOTES) - 1
    finally:
        pipeline.store.close()
        pipeline.catalog.close()


def test_a_big_next_index_is_switched_in_with_its_search_graphs_built(small: Settings, embedder) -> None:
    # Switched in unbuilt, a 50,000-note index was scanned whole by every search and made each start rebuild its
    # lexical index in memory until the upkeep built it (#34). Here "big" is 3 points.
    settings = small.model_copy(update={"store_optimize_after_points": 3})
    build_with_minilm(settings)
    pipeline, engine, _configured, rebuild = open_index(settings)  # the default model is configured
    try:
        while not rebuild.building:
            assert not rebuild.step(settings.index_batch_notes)  # every note done, then the build starts
        assert read_progress(settings.store_path).building_graphs
        assert (
            read_progress(settings.store_path)
            .line()
            .endswith(f"{len(NOTES)}/{len(NOTES)} notes, building its search graphs")
        )
        assert not rebuild.step(1) and rebuild.store.points_to_optimize() == len(NOTES)  # nothing done meanwhile
        edited = "Jardin/Tomates.md"  # saved during the build: in the next index before the switch
        (settings.vault / edited).write_text("# Volcans\n\nLe puy de Dôme domine Clermont.", encoding="utf-8")
        assert pipeline.sync_paths([edited]).indexed == [edited]
        assert first_hit(engine, "tramways jaunes Alfama") == "Voyage/Lisbonne.md"  # the live index answers
        rebuild.wait_for_graphs()
        assert not read_progress(settings.store_path).building_graphs
        while not rebuild.step(settings.index_batch_notes):
            pass
        assert engine.embedder.name == MULTILINGUAL_EMBEDDING_MODEL
        assert first_hit(engine, "quel volcan domine Clermont ?") == edited
        # The build's record came with the shard: only the edit's chunk waits for the upkeep, not the whole index.
        assert pipeline.store.points_to_optimize() == 1 and pipeline.store.count() == len(NOTES)
    finally:
        pipeline.store.close()
        pipeline.catalog.close()


def test_a_killed_rebuild_resumes_and_the_old_index_answers(small: Settings, embedder) -> None:
    build_with_minilm(small)
    pipeline, engine, _configured, rebuild = open_index(small)
    assert not rebuild.step(2)
    done = set(rebuild.pipeline.hashes)
    # The process dies here, in the middle of its next record's line (its folder locks go with it): the old
    # index is intact, the notes recorded before are kept, the torn line is not.
    with (small.store_path / NEXT_DIR / NOTES_FILE).open("a", encoding="utf-8") as notes:
        notes.write('["Tech/Rust.md", "ab')
    rebuild.store.close()
    pipeline.store.close()
    pipeline.catalog.close()
    pipeline, engine, _configured, resumed = open_index(small)
    try:
        assert engine.embedder.name == BUNDLED_EMBEDDING_MODEL
        assert first_hit(engine, "levain mie alvéolée") == "Cuisine/Pain.md"
        assert resumed is not None and set(resumed.pipeline.hashes) == done and len(done) == 2
        assert read_progress(small.store_path).done == 2
        while not resumed.step(2):
            pass
        assert pipeline.store.recorded_model().name == MULTILINGUAL_EMBEDDING_MODEL
        assert first_hit(engine, "levain mie alvéolée") == "Cuisine/Pain.md"
    finally:
        pipeline.store.close()
        pipeline.catalog.close()


def test_a_rebuild_recorded_by_an_earlier_version_resumes_from_its_record(small: Settings, embedder) -> None:
    # Earlier versions kept every note done inside rebuild.json, written whole at each step.
    build_with_minilm(small)
    pipeline, _engine, _configured, rebuild = open_index(small)
    assert not rebuild.step(2)
    done = dict(rebuild.pipeline.hashes)
    rebuild.store.close()
    pipeline.store.close()
    pipeline.catalog.close()
    (small.store_path / NEXT_DIR / NOTES_FILE).unlink()
    progress = small.store_path / NEXT_DIR / PROGRESS_FILE
    state = json.loads(progress.read_text(encoding="utf-8"))
    progress.write_text(json.dumps({**state, "hashes": done, "done": 0}), encoding="utf-8")
    assert read_progress(small.store_path).done == 2
    for _ in range(2):  # resumed, killed again before its next step: the notes done are still known
        pipeline, _engine, _configured, resumed = open_index(small)
        assert resumed is not None and resumed.pipeline.hashes == done
        resumed.store.close()
        pipeline.store.close()
        pipeline.catalog.close()
    assert "hashes" not in json.loads(progress.read_text(encoding="utf-8"))


def test_a_rebuild_starts_without_listing_the_vault_and_its_listing_lets_a_saved_note_cut_in(
    small: Settings, embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Listing 50,000 notes took 0.8 s, which a note saved just after a reindex was asked waited behind (#34).
    monkeypatch.setattr("services.indexing.rebuild.PAUSE_EVERY", 2)
    pipeline, _engine, configured, _rebuild = open_index(small)
    pauses: list[frozenset[str]] = []
    try:
        pipeline.sync_paths(changed_paths(small, pipeline.catalog))
        pipeline.between_batches = pauses.append
        rebuild = Rebuild.start(small, pipeline, configured)
        assert pauses == [] and rebuild.state.total == len(NOTES)  # the first pass: the notes the index knows
        assert len(rebuild._not_done()) == len(NOTES) and pauses == [frozenset(), frozenset()]  # a pass that lists
        rebuild.store.close()
    finally:
        pipeline.store.close()
        pipeline.catalog.close()


def test_a_switch_cut_between_its_renames_is_finished_at_the_next_open(tmp_path: Path) -> None:
    live = EdgeStore(tmp_path)
    live.ensure_collection(3, "old")
    live.close()
    staged = EdgeStore(tmp_path / NEXT_DIR)
    staged.ensure_collection(4, "new")
    staged.close()
    (tmp_path / SWITCH_FILE).write_text(json.dumps({"from": NEXT_DIR}))  # the crash: marker written, nothing moved
    store = EdgeStore(tmp_path)
    try:
        assert store.recorded_model() == ModelRecord("new", 4)
        assert not (tmp_path / NEXT_DIR).exists() and not (tmp_path / SWITCH_FILE).exists()
    finally:
        store.close()


def test_a_qdrant_server_rebuild_fills_a_second_collection_then_moves_the_alias(
    small: Settings, embedder, e5_embedder
) -> None:
    client = QdrantClient(":memory:")  # qdrant-client's local mode: the server's API, aliases included
    catalog = Catalog(small.catalog_path)
    live = ClientStore(client, "obsirag")  # made before aliases: a collection with the configured name
    pipeline = IndexPipeline(small, live, catalog, embedder)
    pipeline.sync_paths(changed_paths(small, catalog))
    engine = SearchEngine(live, embedder)

    def collections() -> set[str]:
        return {c.name for c in client.get_collections().collections}

    try:
        for model, target in ((e5_embedder, "obsirag__a"), (embedder, "obsirag__b")):
            rebuild = Rebuild.start(small, pipeline, model)
            rebuild.engine = engine
            while not rebuild.step(small.index_batch_notes):
                assert first_hit(engine, "tramways jaunes Alfama") == "Voyage/Lisbonne.md"  # the live one answers
                assert target in collections() and read_progress(small.store_path) is not None
            assert collections() == {target}  # the old collection is gone, the alias points at the new one
            assert {a.alias_name: a.collection_name for a in client.get_aliases().aliases} == {"obsirag": target}
            assert read_progress(small.store_path) is None and engine.embedder.name == model.name
            assert first_hit(engine, "tramways jaunes Alfama") == "Voyage/Lisbonne.md"
            other = ClientStore(client, "obsirag", owns_client=False)  # another process resolves the alias
            assert other.recorded_model().name == model.name and other.count() == live.count() > 0
    finally:
        client.close()
        catalog.close()


def test_a_reindex_takes_documents_from_the_extraction_cache(small: Settings, embedder, documents) -> None:
    shutil.copy(documents["Manuel.pdf"], small.vault / "Manuel.pdf")
    pipeline, engine, configured, _ = open_index(small)
    try:
        pipeline.sync_paths(changed_paths(small, pipeline.catalog))
        before = pipeline.store.count()
        reindex = Rebuild.start(small, pipeline, configured)
        while not reindex.step(10):
            pass
        assert reindex.state.embedded == 0 and pipeline.store.count() == before  # nothing read nor embedded again
        hit = engine.search(SearchRequest(query="combien de miel par ruche ?", k=3)).results[0]
        assert (hit.path, hit.page) == ("Manuel.pdf", 2)
    finally:
        pipeline.store.close()
        pipeline.catalog.close()


def test_a_reindex_asked_after_obsirag_model_use_rebuilds_with_the_new_choice(
    small: Settings, embedder, redis_url: str
) -> None:
    """`obsirag model use` on a running system chooses another embedding model and asks for a reindex: the
    indexer's handler reads the choice, rebuilds beside the live index, and the search then embeds with it."""
    from services.choices import ChosenModels, write_choices
    from services.system.handlers.indexer import IndexerHandlers
    from services.system.queues import Queues

    write_choices(small.data_dir, ChosenModels(embedding_model=BUNDLED_EMBEDDING_MODEL))  # chosen before start
    settings = Settings(vault=small.vault, data_dir=small.data_dir, index_batch_notes=2, redis_url=redis_url)
    build_with_minilm(settings)
    pipeline, engine, configured, rebuild = open_index(settings)
    queues = Queues(settings)
    try:
        assert rebuild is None and configured.name == BUNDLED_EMBEDDING_MODEL
        handlers = IndexerHandlers(pipeline, engine, queues, configured)
        write_choices(small.data_dir, ChosenModels(embedding_model=MULTILINGUAL_EMBEDDING_MODEL))  # `model use`
        assert handlers.rebuild_index() == len(NOTES)
        while handlers.rebuild_step() is not None and handlers.rebuild is not None:
            assert first_hit(engine, "tramways jaunes Alfama") == "Voyage/Lisbonne.md"  # the live index answers
        assert engine.embedder.name == MULTILINGUAL_EMBEDDING_MODEL
        assert pipeline.store.recorded_model() == ModelRecord(MULTILINGUAL_EMBEDDING_MODEL, 384)
        assert engine.search(SearchRequest(query="tramways jaunes", k=3)).model == MULTILINGUAL_EMBEDDING_MODEL
    finally:
        queues.hueys["index"].flush()
        pipeline.store.close()
