"""The live shard's files read into the page cache at the owner's start and after each switch (#34)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

from services.retrieval.store import EdgeStore
from services.retrieval.store.edge_folder import live_dir
from services.retrieval.store.page_cache import warm_pages
from tests.retrieval.test_store import DIM, MODEL, corpus


def test_the_files_searches_read_are_read(tmp_path: Path) -> None:
    sizes = {"segments/a/vector_index-lexical/inverted_index.dat": 3 * 2**20 + 17, "segments/b/payload.dat": 5}
    unread = {"wal/open-1": 2**20, "segments/a/vector_storage-title/m.dat": 7, "segments/a/vector_storage-lexical/x": 3}
    for name, size in {**sizes, **unread}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x" * size)
    assert warm_pages(tmp_path) == sum(sizes.values())
    assert warm_pages(tmp_path / "gone") == 0  # a shard switched away meanwhile


def _warmings(caplog: pytest.LogCaptureFixture) -> int:
    """Warmings finished (those under way waited for)."""
    for thread in threading.enumerate():
        if thread.name == "store-pages":
            thread.join()
    return sum("into the page cache" in record.getMessage() for record in caplog.records)


def test_the_owner_s_store_warms_its_shard_now_and_after_each_build(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="services.retrieval.store.page_cache")
    store = EdgeStore(tmp_path / "store")
    try:
        store.ensure_collection(DIM, MODEL)
        store.upsert(corpus())
        assert store.optimize_beside() and _warmings(caplog) == 0  # a store not asked (the CLI's) reads nothing
        store.keep_warm()
        assert _warmings(caplog) == 1
        store.upsert(corpus())
        assert store.optimize_beside() and _warmings(caplog) == 2  # the built shard came from a child process
        assert live_dir(store.path).is_dir() and store.count() == len(corpus())
    finally:
        store.close()
