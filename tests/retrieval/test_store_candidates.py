"""The Edge store's candidate fields kept in memory: after every kind of write, a search that asks for those
fields returns what the shard itself holds (read back whole with ``retrieve``), as without the map."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.retrieval.search import CANDIDATE_FIELDS
from services.retrieval.store import EdgeStore, edge
from tests.retrieval.test_store import DIM, JOURNAL, MODEL, PLAN, ROOT, axis, corpus, make_point, sparse, unit

FIELDS = CANDIDATE_FIELDS


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EdgeStore]:
    store = EdgeStore(tmp_path / "store")
    store.ensure_collection(DIM, MODEL)
    store.upsert(corpus())
    store.keep_candidate_fields(FIELDS)
    store.read_candidate_fields()  # from the shard, as the indexer does after its start
    yield store
    store.close()


def lean_hits(store: EdgeStore) -> dict[str, dict[str, object]]:
    """Every point's candidate fields as both lists return them (each list searched wide enough for all)."""
    found = {}
    for vector in [axis(i) for i in range(DIM)]:
        found |= {hit.id: hit.payload for hit in store.search_dense(vector, None, 50, FIELDS)}
    found |= {hit.id: hit.payload for hit in store.search_sparse(sparse({1: 1.0}), None, 50, FIELDS)}
    return found


def shard_truth(store: EdgeStore) -> dict[str, dict[str, object]]:
    """The same fields read from the shard itself (whole payloads)."""
    return {hit.id: {k: hit.payload[k] for k in FIELDS if k in hit.payload} for hit in store.scroll()}


def test_the_map_is_read_from_the_shard_and_serves_the_searches(store: EdgeStore) -> None:
    assert store._candidates is not None and len(store._candidates) == len(corpus())
    assert lean_hits(store) == shard_truth(store)
    whole = store.search_dense(axis(0), None, 1)[0].payload  # a search asking for more reads the shard
    assert whole["text"] == corpus()[0].payload["text"]


def test_every_write_keeps_the_map_equal_to_the_shard(store: EdgeStore) -> None:
    store.upsert([make_point(PLAN, 0, axis(0), {1: 1.0}, title="Plan renommé", aliases=["Alpha"])])  # replaced
    store.upsert([make_point("New.md", 0, axis(5), {1: 1.0, 4: 1.0})])  # added
    assert lean_hits(store) == shard_truth(store)
    assert lean_hits(store)[corpus()[0].id]["title"] == "Plan renommé"

    store.delete_note(PLAN, keep_ids={corpus()[0].id})  # the note's second chunk goes
    store.delete_note(JOURNAL)
    store.set_note_payload(ROOT, {"title": "Racine", "tags": ["x"]})
    truth = shard_truth(store)
    assert lean_hits(store) == truth and len(store._candidates or []) == len(truth)
    assert {p["path"] for p in truth.values()} == {PLAN, ROOT, "New.md", corpus()[3].payload["path"]}

    store.reset()
    store.ensure_collection(DIM, MODEL)
    store.upsert([make_point(ROOT, 0, axis(4), {1: 1.0})])
    assert lean_hits(store) == shard_truth(store) and len(store._candidates or []) == 1


def test_a_point_the_map_does_not_know_is_read_from_the_shard(store: EdgeStore) -> None:
    assert store._candidates is not None
    store._candidates.clear()  # as when a write lands between a search's query and its lookups
    assert lean_hits(store) == shard_truth(store)


def test_a_rebuilt_store_switched_in_brings_its_own_map(store: EdgeStore) -> None:
    rebuilt = store.open_next()
    rebuilt.ensure_collection(DIM, MODEL)
    rebuilt.upsert([make_point("Rebuilt.md", 0, axis(0), {1: 1.0}), make_point(PLAN, 0, axis(1), {1: 1.0})])
    store.swap_in(rebuilt)
    truth = shard_truth(store)
    assert set(p["path"] for p in truth.values()) == {"Rebuilt.md", PLAN}
    assert lean_hits(store) == truth and len(store._candidates or []) == 2


def test_concurrent_writes_leave_the_map_equal_to_the_shard(store: EdgeStore) -> None:
    """A writer renames notes and deletes chunks while searches read the map: no search fails, and once
    the writes are done every search returns what the shard holds."""
    failures: list[BaseException] = []
    done = threading.Event()

    def search() -> None:
        while not done.is_set():
            try:
                lean_hits(store)
            except BaseException as exc:  # reported by the assertion below
                failures.append(exc)
                return

    searcher = threading.Thread(target=search)
    searcher.start()
    try:
        for n in range(60):
            path = f"Notes/{n % 7}.md"
            store.upsert([make_point(path, i, unit(1.0, n / 60, i), {1: 1.0}, title=f"titre {n}") for i in range(3)])
            if n % 5 == 0:
                store.delete_note(path, keep_ids=set())
            if n % 11 == 0:
                store.set_note_payload(path, {"aliases": [f"alias {n}"]})
    finally:
        done.set()
        searcher.join()
    assert not failures
    assert lean_hits(store) == shard_truth(store)


def reopened(path: Path, monkeypatch: pytest.MonkeyPatch, *, scrolls: bool) -> EdgeStore:
    """The store at ``path`` opened again with its map kept; ``scrolls``: whether the map may come from reading
    the shard (False: it must come from the file the last close saved)."""
    if not scrolls:
        monkeypatch.setattr(edge, "read_map", lambda *_: pytest.fail("the map was read from the shard"))
    store = EdgeStore(path)
    store.keep_candidate_fields(FIELDS)
    store.read_candidate_fields()
    monkeypatch.undo()
    return store


def test_a_clean_close_saves_the_map_and_the_next_start_reads_it(
    store: EdgeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 50,000 notes reading the map from the shard held the GIL for 20 s, every search waiting behind it."""
    bare = make_point("Bare.md", 0, axis(5), {1: 1.0})
    del bare.payload["aliases"], bare.payload["title"]  # absent fields stay absent, not None
    store.upsert([bare, make_point(ROOT, 0, axis(4), {1: 1.0}, aliases=["Racine", "Base"])])
    truth, kept = shard_truth(store), dict(store._candidates._by_id)  # type: ignore[union-attr]
    store.close()
    assert (store.path / edge.CANDIDATES_FILE).exists()

    again = reopened(store.path, monkeypatch, scrolls=False)
    try:
        assert again._candidates is not None and again._candidates._by_id == kept
        assert lean_hits(again) == truth and "title" not in lean_hits(again)[bare.id]
        again.upsert([make_point("After.md", 0, axis(6), {1: 1.0})])  # the file no longer describes the shard
        assert not (again.path / edge.CANDIDATES_FILE).exists()
    finally:
        again.close()


def test_a_write_before_the_read_reads_the_saved_map_first(store: EdgeStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The indexer serves before its start-up reads the map: a note saved meanwhile must not spend the file
    first (at 50,000 notes the map then came from a 17 s scroll, searches timing out behind it)."""
    store.close()
    monkeypatch.setattr(edge, "read_map", lambda *_: pytest.fail("the map was read from the shard"))
    again = EdgeStore(store.path)
    try:
        again.keep_candidate_fields(FIELDS)
        again.upsert([make_point("Saved.md", 0, axis(6), {1: 1.0})])
        again.read_candidate_fields()  # already read: nothing to do
        assert not (again.path / edge.CANDIDATES_FILE).exists()
        assert lean_hits(again) == shard_truth(again) and len(again._candidates or []) == len(corpus()) + 1
    finally:
        again.close()


def test_a_file_that_does_not_describe_the_shard_is_not_used(store: EdgeStore, monkeypatch: pytest.MonkeyPatch) -> None:
    store.close()
    writer = EdgeStore(store.path)  # a process that keeps no map (``obsirag index``) writes, then dies
    writer.upsert([make_point("Written.md", 0, axis(5), {1: 1.0})])
    assert not (store.path / edge.CANDIDATES_FILE).exists()
    writer.close()

    again = reopened(store.path, monkeypatch, scrolls=True)
    assert lean_hits(again) == shard_truth(again) and "Written.md" in {p["path"] for p in lean_hits(again).values()}
    again.close()
    (store.path / edge.CANDIDATES_FILE).write_text('{"fields": ["path"], "rows": [', encoding="utf-8")  # torn
    torn = reopened(store.path, monkeypatch, scrolls=True)
    try:
        assert lean_hits(torn) == shard_truth(torn)
    finally:
        torn.close()


def test_a_rebuild_s_switch_spends_the_saved_map(store: EdgeStore, monkeypatch: pytest.MonkeyPatch) -> None:
    store.close()
    live = reopened(store.path, monkeypatch, scrolls=False)
    rebuilt = live.open_next()
    rebuilt.ensure_collection(DIM, MODEL)
    rebuilt.upsert([make_point("Rebuilt.md", 0, axis(0), {1: 1.0})])
    live.swap_in(rebuilt)
    assert not (live.path / edge.CANDIDATES_FILE).exists()
    live.close()
    again = reopened(store.path, monkeypatch, scrolls=False)  # the rebuilt shard's map, saved at this close
    saved = (store.path / edge.CANDIDATES_FILE).stat().st_ino
    try:
        assert {p["path"] for p in lean_hits(again).values()} == {"Rebuilt.md"}
    finally:
        again.close()
    assert (store.path / edge.CANDIDATES_FILE).stat().st_ino == saved  # the same file: not written again
