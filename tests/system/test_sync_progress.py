"""The first index's progress and ETA (issue #34): what the watcher's last reconcile found, how many of those
notes the indexer has written since, at what rate, and when it ends; shown by `obsirag status` and the
dashboard, gone once done."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from services.catalog import Catalog
from services.catalog.models import NoteRecord, NoteStatus
from services.config import Settings
from services.system.sync_progress import sync_progress


def test_progress_counts_the_notes_written_since_the_reconcile_and_says_when_it_ends(tmp_path: Path) -> None:
    settings = Settings(vault=tmp_path, data_dir=tmp_path / "data")
    settings.data_dir.mkdir()
    started = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
    catalog = Catalog(settings.catalog_path)
    before = NoteRecord(path="old.md", status=NoteStatus.INDEXED, indexed_at=started - timedelta(days=1))
    catalog.upsert_note(before)  # indexed by an earlier run: not this sync's
    for i in range(25):
        status = NoteStatus.ERROR if i == 3 else NoteStatus.INDEXED  # a failed note is done too
        catalog.upsert_note(NoteRecord(path=f"n{i}.md", status=status, indexed_at=started + timedelta(seconds=i)))
    catalog.close()
    watcher = {"last_reconcile": {"at": started.timestamp(), "changed": 100}}

    progress = sync_progress(settings, watcher, now=started.timestamp() + 50)
    assert progress is not None and (progress.done, progress.changed) == (25, 100)
    assert progress.notes_per_s == 0.5 and progress.eta_seconds == 150.0
    assert progress.line("fr") == "indexation : 25/100 notes (25%), 0,5 notes/s, fin dans 2 min"
    assert progress.line("en") == "indexing: 25/100 notes (25%), 0.5 notes/s, done in 2 min"
    done = {"last_reconcile": {"at": started.timestamp(), "changed": 25}}
    assert sync_progress(settings, done) is None  # all written: no line
    assert sync_progress(settings, {"last_reconcile": {"at": 0, "changed": 0}}) is None  # an unchanged vault
    assert sync_progress(settings, None) is None  # no watcher
