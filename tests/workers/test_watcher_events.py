"""The watcher's file events (issue #34): the kernel reports only the events it acts on, so that reading the
vault (the indexer, the user's other tools) cannot overflow its queue, and events lost all the same make it
reconcile the vault. A real observer on a real folder."""

from __future__ import annotations

import threading
from pathlib import Path

from watchdog.events import EventsLostEvent, FileSystemEvent

from services.config import Settings
from workers.watcher import Debouncer, observe


class Recording(Debouncer):
    """The watcher's own handler, keeping the type of each event it was given."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.seen: list[str] = []
        self.saved = threading.Event()

    def on_any_event(self, event: FileSystemEvent) -> None:
        self.seen.append(event.event_type)
        super().on_any_event(event)
        if "Saved.md" in str(event.src_path):
            self.saved.set()


def test_reading_the_vault_gives_the_watcher_no_event_and_a_save_does(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "Dossier").mkdir(parents=True)
    read = vault / "Dossier" / "Lue.md"
    read.write_text("# Lue\n\nUne note que d'autres lisent.\n", encoding="utf-8")
    handler = Recording(Settings(vault=vault, data_dir=tmp_path / "data"))
    observer = observe(handler.settings, handler)
    observer.start()
    try:
        for _ in range(200):  # an indexer, a search tool, a backup reading the note
            read.read_text(encoding="utf-8")
        (vault / "Dossier" / "Saved.md").write_text("# Enregistrée\n", encoding="utf-8")
        assert handler.saved.wait(10)  # events come in order: the reads' would have come before the save's
    finally:
        observer.stop()
        observer.join()
    assert "opened" not in handler.seen and "closed_no_write" not in handler.seen, handler.seen
    assert set(handler.pending) == {"Dossier/Saved.md"}


def test_events_lost_make_the_watcher_reconcile_the_vault(tmp_path: Path) -> None:
    handler = Debouncer(Settings(vault=tmp_path, data_dir=tmp_path / "data"))
    handler.dispatch(EventsLostEvent(str(tmp_path), is_directory=True))
    assert handler.rescan.is_set() and not handler.pending
