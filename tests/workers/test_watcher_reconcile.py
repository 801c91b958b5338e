"""The watcher's periodic reconcile waits while index tasks are queued (issue #34): during a first index it
would queue the same notes again and restart the progress; a folder event or a Redis restart still reconciles
at once. Real Redis queues, the real catalog."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from watchdog.events import DirDeletedEvent, DirMovedEvent

from services.catalog import Catalog
from services.catalog.models import NoteRecord
from services.config import Settings
from services.system.queues import Queues
from workers.watcher import Watcher


def test_a_periodic_reconcile_waits_for_the_queued_index_tasks(tmp_path: Path, redis_url: str) -> None:
    (tmp_path / "vault").mkdir()
    (tmp_path / "vault" / "Note.md").write_text("# Note\n\nUn texte.\n", encoding="utf-8")
    settings = Settings(vault=tmp_path / "vault", data_dir=tmp_path / "data", redis_url=redis_url)
    settings.data_dir.mkdir()
    queues = Queues(settings)
    queues.index.flush()
    catalog = Catalog(settings.catalog_path)
    watcher = Watcher(settings, queues, catalog)
    try:
        watcher.flush()  # the first reconcile: due at once
        assert watcher.last_reconcile["changed"] == 1 and queues.index.pending_count() == 1
        first = watcher.last_reconcile["at"]
        watcher.next_reconcile = 0.0  # the period is over, but a task still waits
        watcher.flush()
        assert watcher.last_reconcile["at"] == first and queues.index.pending_count() == 1
        assert watcher.next_reconcile > time.monotonic() + 30  # tried again in a minute
        watcher.debouncer.rescan.set()  # a folder moved: reconciled whatever waits
        watcher.flush()
        assert watcher.last_reconcile["at"] > first and queues.index.pending_count() == 2
        queues.index.flush()
        watcher.next_reconcile = 0.0
        watcher.flush()  # nothing waits: the periodic reconcile runs
        assert queues.index.pending_count() == 1
    finally:
        queues.index.flush()
        catalog.close()


def test_started_on_a_previous_run_s_backlog_it_shows_the_progress_without_queuing_again(
    tmp_path: Path, redis_url: str
) -> None:
    """Stopped mid-first-index, started again: the tasks left in Redis hold the work, and the sync's progress
    (obsirag status, the dashboard) counts what is left from the first look, not once the backlog is gone."""
    (tmp_path / "vault").mkdir()
    for name in ("Une", "Deux"):
        (tmp_path / "vault" / f"{name}.md").write_text(f"# {name}\n\nUn texte.\n", encoding="utf-8")
    settings = Settings(vault=tmp_path / "vault", data_dir=tmp_path / "data", redis_url=redis_url)
    settings.data_dir.mkdir()
    queues = Queues(settings)
    queues.index.flush()
    catalog = Catalog(settings.catalog_path)
    try:
        queues.enqueue_paths(["Une.md", "Deux.md"], settings.index_batch_notes, 0)  # the last run's backlog
        left = queues.index.pending_count()
        watcher = Watcher(settings, queues, catalog)
        watcher.flush()
        assert watcher.last_reconcile["changed"] == 2 and queues.index.pending_count() == left
        first = watcher.last_reconcile["at"]
        watcher.flush()  # published once: the next look waits for the backlog as before
        assert watcher.last_reconcile["at"] == first
    finally:
        queues.index.flush()
        catalog.close()


def test_a_folder_that_moved_or_vanished_is_reconciled_alone(tmp_path: Path, redis_url: str) -> None:
    """Its notes, under both names, are synced; the rest of the vault is not walked (at 50,000 notes that walk
    cost 2 s of a core at each folder deleted or renamed, searches waiting beside it)."""
    vault = tmp_path / "vault"
    for rel in ("Garder/Une.md", "Projets/A.md", "Projets/Sous/B.md", ".cache/X.md"):
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(f"# {rel}\n", encoding="utf-8")
    settings = Settings(vault=vault, data_dir=tmp_path / "data", redis_url=redis_url)
    settings.data_dir.mkdir()
    queues, catalog = Queues(settings), Catalog(settings.catalog_path)
    watcher = Watcher(settings, queues, catalog)
    for rel in ("Garder/Une.md", "Projets/A.md", "Projets/Sous/B.md"):
        stat = (vault / rel).stat()
        catalog.upsert_note(NoteRecord(path=rel, mtime=stat.st_mtime, size=stat.st_size))
    queued: list[str] = []
    real = queues.enqueue_paths
    queues.enqueue_paths = lambda paths, *args: queued.extend(paths) or real(paths, *args)  # type: ignore[method-assign]
    watcher.last_reconcile, watcher.next_reconcile = {"at": 0.0}, time.monotonic() + 3600  # none due
    try:
        (vault / "Garder/Une.md").write_text("# Changée sans que le watcher le voie\n", encoding="utf-8")
        (vault / "Archives").mkdir()
        (vault / "Projets").rename(vault / "Archives/Projets")
        watcher.debouncer.on_any_event(DirMovedEvent(str(vault / "Projets"), str(vault / "Archives/Projets")))
        watcher.debouncer.on_any_event(DirMovedEvent(str(vault / ".cache"), str(vault / ".cache2")))
        watcher.flush()
        moved = ["Archives/Projets/A.md", "Archives/Projets/Sous/B.md", "Projets/A.md", "Projets/Sous/B.md"]
        assert sorted(queued) == moved  # the new names to index, the old ones to remove; « Garder » unread

        queued.clear()
        shutil.rmtree(vault / "Garder")
        watcher.debouncer.on_any_event(DirDeletedEvent(str(vault / "Garder")))
        watcher.flush()
        assert queued == ["Garder/Une.md"]
        watcher.flush()  # taken once
        assert queued == ["Garder/Une.md"]
    finally:
        queues.index.flush()
        catalog.close()
