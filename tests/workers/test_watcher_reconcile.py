"""The watcher's periodic reconcile waits while index tasks are queued (issue #34): during a first index it
would queue the same notes again and restart the progress; a folder event or a Redis restart still reconciles
at once. Real Redis queues, the real catalog."""

from __future__ import annotations

import time
from pathlib import Path

from services.catalog import Catalog
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
