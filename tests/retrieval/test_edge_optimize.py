"""The Edge shard optimized beside the live one, in a real child process: nothing written meanwhile is lost."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from qdrant_edge import Distance, EdgeConfig, EdgeSparseVectorParams, EdgeVectorParams, Modifier

from services.retrieval.models import StoreFilter
from services.retrieval.store import DENSE, SPARSE, TITLE, EdgeStore, point_id
from services.retrieval.store import edge_folder as folder
from services.retrieval.store import edge_optimize as optimizing
from services.retrieval.store.edge_folder import LIVE_FILE, SHARD_DIR, SWITCH_FILE, live_dir
from tests.retrieval.test_store import DIM, INSIGHT, JOURNAL, MODEL, PLAN, axis, corpus, make_point


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EdgeStore]:
    store = EdgeStore(tmp_path / "store")
    store.ensure_collection(DIM, MODEL)
    store.upsert(corpus())
    yield store
    store.close()


def _meanwhile(monkeypatch: pytest.MonkeyPatch, act) -> list[Path]:
    """Runs ``act`` while the child optimizes the copy (the real child runs after it); the copies it saw."""
    real, seen = subprocess.run, []

    def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[bytes]:
        seen.append(Path(command[3]))  # [python, -c, child, copy, dim]
        act()
        return real(command, **kwargs)

    monkeypatch.setattr(optimizing.subprocess, "run", run)
    return seen


def test_writes_made_while_the_copy_is_optimized_are_in_the_optimized_shard(
    store: EdgeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert store.points_to_optimize() == 5

    def edits() -> None:
        store.upsert([make_point("Nouvelle.md", 0, axis(5), {4: 1.0})])
        store.delete_note(JOURNAL)
        store.set_note_payload(PLAN, {"entities": ["Alice"]})

    copies = _meanwhile(monkeypatch, edits)
    assert store.optimize_beside()
    assert copies and copies[0] == live_dir(store.path) and not (store.path / SHARD_DIR).exists()
    assert store.count() == 5 and store.search_dense(axis(5), None, 1)[0].payload["path"] == "Nouvelle.md"
    assert not store.retrieve([point_id(JOURNAL, 0)])
    planned = store.retrieve([point_id(PLAN, 0), point_id(PLAN, 1)])
    assert len(planned) == 2 and all(hit.payload["entities"] == ["Alice"] for hit in planned)
    assert store.points_to_optimize() == 3  # written during the build, replayed after it: not built yet
    assert not list(store.path.glob("shard.deleted-*"))  # the old shard deleted, once the lock was released
    store.upsert([make_point("Autre.md", 0, axis(6), {4: 1.0})])  # written after: the live shard takes it
    assert store.points_to_optimize() == 4 and store.search_dense(axis(6), None, 1)[0].payload["path"] == "Autre.md"
    store.close()  # on disk as it was in memory
    with EdgeStore(store.path) as again:
        assert again.count() == 6 and again.search_dense(axis(3), None, 1)[0].id == point_id(INSIGHT, 0)


def test_points_written_again_count_towards_the_next_build_across_a_restart(store: EdgeStore) -> None:
    """An edit or entities set later move a point out of its built segment without adding one: they count."""
    assert store.optimize_beside() and store.points_to_optimize() == 0
    store.set_note_payload(PLAN, {"entities": ["Alice"]})  # its two points
    store.upsert([make_point(INSIGHT, 0, axis(3), {4: 1.0})])  # the same point written again
    store.delete_note(JOURNAL)  # a deletion writes nothing
    assert store.count() == 4 and store.points_to_optimize() == 3
    store.close()
    with EdgeStore(store.path) as again:
        assert again.points_to_optimize() == 3


def test_a_copy_of_a_shard_replaced_meanwhile_is_dropped(store: EdgeStore, monkeypatch: pytest.MonkeyPatch) -> None:
    _meanwhile(monkeypatch, store.reset)
    assert not store.optimize_beside()
    assert store.count() == 0 and not optimizing.unfinished_builds(store.path)
    assert not list(store.path.glob(f"{folder.BUILT_PREFIX}*"))


def test_an_optimization_a_crash_interrupted_is_dropped_or_finished_at_the_next_open(tmp_path: Path) -> None:
    path = tmp_path / "store"
    store = EdgeStore(path)
    store.ensure_collection(DIM, MODEL)
    store.upsert(corpus())
    store.close()
    unfinished = path / f"{folder.BUILT_PREFIX}0123"
    unfinished.mkdir()  # killed while the child ran: the live shard has every write
    store = EdgeStore(path)
    assert store.count() == 5 and not unfinished.exists()
    store.close()
    # Killed just after the switch (``live.json`` names the built shard), before the old shard's deletion.
    (path / SHARD_DIR).rename(unfinished)
    (path / SHARD_DIR).mkdir()
    (path / LIVE_FILE).write_text(json.dumps({"dir": unfinished.name}))
    store = EdgeStore(path)
    assert store.count() == 5 and not (path / SHARD_DIR).exists()
    store.close()
    # An earlier version killed between the two renames of its switch: its copy is complete, the switch marked.
    earlier = path / optimizing.EARLIER_COPY_DIR
    earlier.mkdir()
    unfinished.rename(earlier / SHARD_DIR)
    (path / LIVE_FILE).unlink()
    (path / SWITCH_FILE).write_text(json.dumps({"from": optimizing.EARLIER_COPY_DIR}))
    with EdgeStore(path) as store:
        assert store.count() == 5 and not (path / SWITCH_FILE).exists() and not earlier.exists()


def test_writes_made_during_the_copy_s_first_pass_are_in_the_built_shard_and_it_is_loaded_once(
    store: EdgeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first pass copies with no lock held (writes go on); the second copies again what they changed. The
    built shard becomes the live one where it is: loaded once, not again after a rename."""
    real_copy, real_load, loads = optimizing.copy_unlocked, optimizing.load_shard, []

    def copy_then_write(source: Path, target: Path, flushed: int) -> object:
        first = real_copy(source, target, flushed)
        store.upsert([make_point("Pendant.md", 0, axis(5), {4: 1.0})])
        store.set_note_payload(PLAN, {"entities": ["Alice"]})
        return first

    monkeypatch.setattr(optimizing, "copy_unlocked", copy_then_write)
    monkeypatch.setattr(optimizing, "load_shard", lambda shard_dir: loads.append(shard_dir) or real_load(shard_dir))
    assert store.optimize_beside()
    assert loads == [live_dir(store.path)]
    assert store.count() == 6 and store.search_dense(axis(5), None, 1)[0].payload["path"] == "Pendant.md"
    planned = store.retrieve([point_id(PLAN, 0), point_id(PLAN, 1)])
    assert len(planned) == 2 and all(hit.payload["entities"] == ["Alice"] for hit in planned)
    assert store.points_to_optimize() == 0  # copied before the build: built with the rest


def _placements(store: EdgeStore) -> dict[str, object]:
    """Where the shard's config (Edge's own file) puts the parts a built segment holds."""
    config = json.loads((live_dir(store.path) / "edge_config.json").read_text(encoding="utf-8"))
    return {
        "title": config["vectors"][TITLE].get("memory"),
        "lexical": config["sparse_vectors"][SPARSE].get("memory"),
        "graph": config.get("hnsw_config", {}).get("memory"),
        "dense": config["vectors"][DENSE].get("memory"),
        "int8": (config["vectors"][DENSE].get("quantization_config") or {}).get("scalar", {}).get("memory"),
    }


def _mapped_indexes(store: EdgeStore) -> set[str]:
    assert store._shard is not None
    indexes = store._shard.info().payload_schema
    return {field for field, info in indexes.items() if info.params is not None and info.params.on_disk}


def test_a_shard_made_before_the_memory_placements_takes_them_at_its_next_optimization(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The graph, the lexical index, the title vectors, the dense vectors' float originals (their int8 copies
    cached) and the path and entities indexes mapped from disk: set on a new shard, and on an earlier one by the
    child that optimizes it (beside the live shard)."""
    earlier = EdgeConfig(
        vectors={
            DENSE: EdgeVectorParams(size=DIM, distance=Distance.Cosine),
            TITLE: EdgeVectorParams(size=DIM, distance=Distance.Cosine),
        },
        sparse_vectors={SPARSE: EdgeSparseVectorParams(modifier=Modifier.Idf)},
    )
    monkeypatch.setattr(folder, "shard_config", lambda dim: earlier)
    monkeypatch.setattr(folder, "MAPPED_FIELDS", ())  # every payload index held in memory, as before
    store = EdgeStore(tmp_path / "store")
    try:
        store.ensure_collection(DIM, MODEL)
        store.upsert(corpus())
        monkeypatch.undo()
        assert _placements(store) == {"title": None, "lexical": None, "graph": None, "dense": None, "int8": None}
        assert not _mapped_indexes(store)
        assert store.optimize_beside()
        built = {"title": "cold", "lexical": "cold", "graph": "cold", "dense": "cold", "int8": "cached"}
        assert _placements(store) == built
        assert _mapped_indexes(store) == {"path", "entities"}
        assert [hit.id for hit in store.search_dense(axis(0), StoreFilter(paths=[PLAN]), 5)] == [
            point_id(PLAN, 0),
            point_id(PLAN, 1),
        ]
        assert store.search_dense(axis(3), None, 1)[0].id == point_id(INSIGHT, 0)
        fresh = EdgeStore(tmp_path / "fresh")
        fresh.ensure_collection(DIM, MODEL)
        assert _placements(fresh) == _placements(store) and _mapped_indexes(fresh) == _mapped_indexes(store)
        fresh.close()
    finally:
        store.close()


def test_a_rebuild_s_switch_replaces_a_shard_built_beside_and_its_next_shard_built_beside_too(
    store: EdgeStore,
) -> None:
    """Both shards in folders ``live.json`` names: the next one becomes ``shard``, the old built one goes."""
    assert store.optimize_beside() and (store.path / LIVE_FILE).exists()
    old = live_dir(store.path)
    rebuilt = store.open_next()
    rebuilt.ensure_collection(DIM, MODEL)
    rebuilt.upsert([make_point("Seule.md", 0, axis(5), {4: 1.0})])
    assert rebuilt.optimize_beside() and live_dir(rebuilt.path) != rebuilt.path / SHARD_DIR
    store.swap_in(rebuilt)
    assert live_dir(store.path) == store.path / SHARD_DIR and not (store.path / LIVE_FILE).exists()
    assert not old.exists() and not optimizing.unfinished_builds(store.path)
    assert store.count() == 1 and store.search_dense(axis(5), None, 1)[0].payload["path"] == "Seule.md"
    store.close()
    with EdgeStore(store.path) as again:
        assert again.count() == 1
