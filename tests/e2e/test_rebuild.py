"""End to end: an index built with MiniLM, `obsirag up` with the default model: rebuilt while search answers."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.config import BUNDLED_EMBEDDING_MODEL, MULTILINGUAL_EMBEDDING_MODEL, Settings
from services.indexing.pipeline import IndexPipeline
from services.indexing.rebuild_record import read_progress
from services.indexing.reconcile import changed_paths
from services.retrieval.embedding import load_embedder
from services.retrieval.store import EdgeStore
from services.retrieval.store.edge_folder import OPTIMIZED_FILE, recorded_model_at
from tests.support.system import start_system, wait_until
from workers.process import stop_process

pytestmark = pytest.mark.e2e


def write_vault(vault: Path) -> None:
    (vault / "Cuisine").mkdir(parents=True)
    (vault / "Cuisine" / "Pain.md").write_text("# Pain au levain\n\nLe levain nourri la veille.", encoding="utf-8")
    for i in range(9):  # ten notes: the kill lands between the third and the seventh step
        (vault / "Carnet").mkdir(exist_ok=True)
        text = f"# Jour {i}\n\nLa marée numéro {i} a recouvert les dunes et les salines du village."
        (vault / "Carnet" / f"jour-{i:02d}.md").write_text(text, encoding="utf-8")


def test_up_rebuilds_an_index_of_another_model_while_search_answers(tmp_path: Path) -> None:
    settings = Settings(
        vault=tmp_path / "vault",
        data_dir=tmp_path / "data",
        heartbeat_seconds=0.5,
        debounce_seconds=0.2,
        reconcile_minutes=60,
        index_batch_notes=1,  # one note per rebuild step: time to search in between
        learn_enabled=False,
        llm_warm_up=False,
        store_optimize_after_points=5,  # the next index's search graphs built before its switch (#34)
    )
    write_vault(settings.vault)
    old = IndexPipeline(
        settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), load_embedder(BUNDLED_EMBEDDING_MODEL)
    )
    old.sync_paths(changed_paths(settings, old.catalog))
    old.store.close()
    old.catalog.close()

    system = start_system(settings)  # the default model configured
    try:
        system.wait_alive()
        rebuilding = lambda: recorded_model_at(settings.store_path).name == BUNDLED_EMBEDDING_MODEL  # noqa: E731
        progress = wait_until(lambda: read_progress(settings.store_path), "the rebuild under way")
        assert progress.model == MULTILINGUAL_EMBEDDING_MODEL
        answered, killed_at, building = 0, None, False
        while rebuilding():
            assert system.search("levain nourri la veille")[:1] == ["Cuisine/Pain.md"]  # the old index answers
            answered += 1
            now = read_progress(settings.store_path) or progress
            done, building = now.done, building or now.building_graphs
            if killed_at is None and 3 <= done < progress.total - 3:
                victim, killed_at = system.process_state("indexer").pid, done
                os.kill(victim, signal.SIGKILL)
                restarted = lambda v=victim: (s := system.process_state("indexer")) and s.pid != v  # noqa: E731
                wait_until(restarted, "indexer restarted")
                resumed = read_progress(settings.store_path)
                assert resumed is None or resumed.done >= killed_at  # resumed, not started again
        assert answered >= 3 and killed_at is not None and building
        built = json.loads((settings.store_path / OPTIMIZED_FILE).read_text(encoding="utf-8"))
        assert built["points"] >= 10  # the switched-in shard was built (its record came with it): every chunk
        assert recorded_model_at(settings.store_path).name == MULTILINGUAL_EMBEDDING_MODEL
        assert system.search("levain nourri la veille")[:1] == ["Cuisine/Pain.md"]  # now with e5
        assert read_progress(settings.store_path) is None
        system.stop()
    finally:
        stop_process(system.process, 60, signal.SIGINT)
