"""Several indexers on one Redis (issue #34, server mode): per-note leases keep two indexer processes from ever
syncing one note at once, and together they end with the index one indexer builds.

Real processes (``python -m workers.indexer``) on a real Redis. There is no Qdrant server binary on these
machines, so each indexer writes its own embedded store: the two stores together are compared with the store
of one indexer alone, point by point (in server mode they would write one collection, with the same points).
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.catalog.models import NoteStatus
from services.config import Settings
from services.retrieval.store.edge import EdgeStore
from services.system.note_claims import PREFIX, NoteClaims, release_dead
from services.system.queues import Queues
from tests.support.system import seed_sample_caches, system_env, wait_until
from workers.redis_server import start_private_redis

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def _indexer(settings: Settings, redis_url: str, store: Path, log: Path) -> subprocess.Popen[bytes]:
    env = system_env(settings) | {
        "OBSIRAG_VAULT": str(settings.vault),
        "OBSIRAG_DATA_DIR": str(settings.data_dir),
        "OBSIRAG_REDIS_URL": redis_url,
        "OBSIRAG_QDRANT_PATH": str(store),
        "OBSIRAG_ATTACHMENTS": "",  # notes only: no extractor runs here
    }
    with log.open("ab") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "workers.indexer"], env=env, cwd=ROOT, stdout=output, stderr=output
        )


def _index(settings: Settings, stores: list[Path]) -> dict[str, str]:
    """Run one indexer per store on a Redis of their own until the vault's notes are indexed; the points of
    all the stores (id → note path), each id in one store only."""
    redis = start_private_redis(settings.model_copy(update={"data_dir": settings.data_dir / "redis-host"}))
    url = redis.url
    processes = [
        _indexer(settings, url, store, settings.data_dir / f"indexer-{i}.log") for i, store in enumerate(stores)
    ]
    notes = sorted(p.relative_to(settings.vault).as_posix() for p in settings.vault.rglob("*.md"))
    catalog = Catalog(settings.catalog_path)
    queues = Queues(settings.model_copy(update={"redis_url": url}))

    def done() -> bool:
        states = catalog.note_states()
        depth = queues.index.pending_count() + queues.index.scheduled_count()
        return depth == 0 and all(path in states for path in notes)

    try:
        wait_until(done, "every note indexed by the indexers")
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            process.wait(60)
        redis.stop()
    assert all(catalog.get_note(path).status == NoteStatus.INDEXED for path in notes)  # type: ignore[union-attr]
    points: dict[str, str] = {}
    for store in stores:
        with EdgeStore(store) as opened:
            for hit in opened.scroll():
                assert hit.id not in points, f"{hit.payload['path']} written by two indexers"
                points[hit.id] = hit.payload["path"]
    runs = [run for run in catalog.runs.last_runs(10) if run.kind == "indexer"][: len(stores)]
    assert sum(run.counters.get("notes_indexed", 0) for run in runs) == len(notes)  # each note embedded once
    catalog.close()
    return points


def test_two_indexers_on_one_redis_index_each_note_once_and_build_the_index_of_one(
    settings: Settings, tmp_path: Path, sample_caches: Path
) -> None:
    settings = settings.model_copy(update={"attachments": []})
    seed_sample_caches(settings, sample_caches)
    # Each indexer enqueues the whole vault when it starts (its reconcile): every note is asked for twice, and
    # the two take the batches at the same time.
    together = _index(settings, [tmp_path / "store-a", tmp_path / "store-b"])
    alone_settings = settings.model_copy(update={"data_dir": tmp_path / "alone"})
    seed_sample_caches(alone_settings, sample_caches)
    alone = _index(alone_settings, [tmp_path / "store-alone"])
    assert together == alone
    assert len(set(together.values())) == len(list(settings.vault.rglob("*.md")))


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_note_leased_by_one_indexer_is_refused_to_another_renewed_while_held_and_freed_when_its_holder_dies(
    settings: Settings,
) -> None:
    redis = start_private_redis(settings)
    try:
        client = Queues(settings.model_copy(update={"redis_url": redis.url})).index.storage.conn
        first, second = NoteClaims(client), NoteClaims(client, lease_seconds=0.5)
        assert first.claim(["a.md", "b.md"]) == (["a.md", "b.md"], [])
        assert second.claim(["b.md", "c.md"]) == (["c.md"], ["b.md"])
        assert first.holder("b.md") == first.owner
        first.release(["b.md"])
        assert second.claim(["b.md"]) == (["b.md"], [])
        second.release(["b.md", "c.md"])
        renewed = NoteClaims(client, lease_seconds=0.6)
        assert renewed.claim(["d.md"])[0] == ["d.md"]
        time.sleep(1.5)  # over twice its lease: renewed while held
        assert first.claim(["d.md"]) == ([], ["d.md"])
        renewed.release(["d.md"])
        # A killed indexer of this host: its leases are freed by the next one's start.
        client.set(PREFIX + "e.md", f"{socket.gethostname()}:{_dead_pid()}:x", px=60_000)
        client.set(PREFIX + "f.md", "another-host:1:x", px=60_000)
        assert release_dead(client) == 1
        assert first.claim(["e.md", "f.md"]) == (["e.md"], ["f.md"])
    finally:
        redis.stop()
