"""The indexer builds its store's search graphs only once the index queue is quiet and enough points wait."""

from __future__ import annotations

from pathlib import Path

from qdrant_client import QdrantClient

from services.retrieval.store import ClientStore, EdgeStore
from services.system.store_upkeep import StoreUpkeep
from tests.retrieval.test_store import DIM, MODEL, corpus


def test_the_graphs_are_built_after_two_quiet_looks_and_only_when_enough_points_wait(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path / "store")
    try:
        store.ensure_collection(DIM, MODEL)
        store.upsert(corpus())
        pending = [3]
        upkeep = StoreUpkeep(store, lambda: pending[0], after_points=5)
        assert not upkeep.check()  # a batch waits
        pending[0] = 0
        assert not upkeep.check()  # quiet once: maybe a pause between two batches
        assert upkeep.check() and store.points_to_optimize() == 0
        assert not upkeep.check() and not upkeep.check()  # quiet, but nothing new to build
        assert not StoreUpkeep(store, lambda: 0, after_points=0).check()  # 0: never
    finally:
        store.close()


def test_a_long_first_index_has_its_graphs_built_as_it_goes(tmp_path: Path) -> None:
    """Past ``busy_points`` the queue's work does not hold the build back (the indexer's memory stays bounded)."""
    store = EdgeStore(tmp_path / "store")
    try:
        store.ensure_collection(DIM, MODEL)
        store.upsert(corpus())  # 5 points wait, the queue works
        assert not StoreUpkeep(store, lambda: 40, after_points=2).check()  # no busy bound: waits for the quiet
        assert not StoreUpkeep(store, lambda: 40, after_points=2, busy_points=6).check()  # below the bound
        assert StoreUpkeep(store, lambda: 40, after_points=2, busy_points=4).check()
        assert store.points_to_optimize() == 0
    finally:
        store.close()


def test_a_qdrant_server_is_left_to_build_its_own_graphs() -> None:
    client = QdrantClient(":memory:")
    try:
        store = ClientStore(client, "chunks")
        store.ensure_collection(DIM, MODEL)
        store.upsert(corpus())
        upkeep = StoreUpkeep(store, lambda: 0, after_points=1)
        assert not upkeep.check() and not upkeep.check() and store.points_to_optimize() == 0
    finally:
        client.close()
