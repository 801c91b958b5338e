"""The watcher process: file events and periodic reconciles become ``index`` tasks."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import redis
from watchdog.events import (
    DirDeletedEvent,
    DirMovedEvent,
    EventsLostEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

from services import vault
from services.catalog import Catalog
from services.config import Settings, load_settings
from services.indexing.reconcile import changed_paths
from services.lifeline import watch_parent
from services.system.queues import EVENT_PRIORITY, RECONCILE_PRIORITY, Queues
from workers.process import LINK, run_until_stopped, setup_logging, stop_on_signals

log = logging.getLogger(__name__)
# The events the watcher acts on, asked of the kernel. Unfiltered, inotify also reports each open and close of
# a file or folder in the vault (each note any process reads, each folder listed): at 50,000 notes a folder's
# move overflowed its queue (16,384 events) 29 times in a minute, events lost each time, and each time
# watchdog listed the vault's 20,000 folders again to re-add its watches, which overflowed it again (#34).
EVENTS = (
    FileCreatedEvent,
    FileModifiedEvent,
    FileClosedEvent,
    FileMovedEvent,
    FileDeletedEvent,
    DirMovedEvent,
    DirDeletedEvent,
    EventsLostEvent,
)


class Debouncer(FileSystemEventHandler):
    """Collects touched note paths; a path is emitted once it has been quiet for ``delay`` seconds."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.pending: dict[str, float] = {}
        self.lock = threading.Lock()
        self.rescan = threading.Event()  # the vault itself moved or vanished: reconcile it all
        self.folders: set[str] = set()  # folders that moved (both names) or vanished: their reconcile is due

    def on_any_event(self, event: FileSystemEvent) -> None:
        if isinstance(event, EventsLostEvent):  # the kernel's queue overflowed: the reconcile finds what they said
            log.warning("file events lost (the system's queue overflowed): reconciling the vault")
            self.rescan.set()
            return
        if event.is_directory:
            if event.event_type in ("moved", "deleted"):
                self._folder_changed(event)
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = self._relative(raw)
            if path is not None:
                with self.lock:
                    self.pending[path] = time.monotonic()

    def _folder_changed(self, event: FileSystemEvent) -> None:
        """Only the folder's notes can have changed: reconciling the whole vault for it cost 2 s of a core at
        50,000 notes, searches waiting beside it (#34)."""
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            folder = self._inside(raw)
            if folder is None:  # moved out of the vault (its other name is inside) or in from outside
                continue
            if folder == ".":  # the vault itself
                self.rescan.set()
                continue
            with self.lock:
                self.folders.add(folder)

    def take_folders(self) -> list[str]:
        """The folders to reconcile, the outermost only (a folder's reconcile covers those inside it)."""
        with self.lock:
            folders, self.folders = sorted(self.folders), set()
        return [f for f in folders if not any(f.startswith(f"{o}/") for o in folders)]

    def _relative(self, raw: str | bytes) -> str | None:
        rel = self._inside(raw)
        if rel is None or not vault.is_indexable(rel, self.settings.exclude, self.settings.attachments):
            return None
        return rel

    def _inside(self, raw: str | bytes) -> str | None:
        """An event's path relative to the vault (None: empty, or outside it)."""
        if not raw:
            return None
        try:
            return Path(str(raw)).relative_to(self.settings.vault).as_posix()
        except ValueError:
            return None

    def due(self) -> list[str]:
        """Paths quiet for long enough, removed from the pending set."""
        cutoff = time.monotonic() - self.settings.debounce_seconds
        with self.lock:
            ready = [path for path, seen in self.pending.items() if seen <= cutoff]
            for path in ready:
                del self.pending[path]
        return ready


class Watcher:
    def __init__(self, settings: Settings, queues: Queues, catalog: Catalog) -> None:
        self.settings = settings
        self.queues = queues
        self.catalog = catalog
        self.debouncer = Debouncer(settings)
        self.next_reconcile = 0.0
        self.last_reconcile: dict[str, float] = {}
        self.redis_run: str | None = None  # the run id of the Redis this watcher last saw
        self.next_redis_check = 0.0

    def reconcile(self, enqueue: bool = True) -> None:
        """Queues what the catalog lacks and publishes how much (the sync's progress); ``enqueue=False``: only
        publishes it, the tasks already waiting hold the work."""
        paths = changed_paths(self.settings, self.catalog)
        tasks = self.queues.enqueue_paths(paths, self.settings.index_batch_notes, RECONCILE_PRIORITY) if enqueue else 0
        level = logging.INFO if paths else logging.DEBUG  # an idle vault's periodic reconcile says nothing
        log.log(level, "reconcile: %d notes to sync in %d tasks", len(paths), tasks)
        written = sum(1 for path in paths if (self.settings.vault / path).exists())  # the rest are deletions
        self.last_reconcile = {"at": time.time(), "changed": written, "deleted": len(paths) - written}
        self.next_reconcile = time.monotonic() + self.settings.reconcile_minutes * 60

    def reconcile_folders(self, folders: list[str]) -> None:
        """Queues what changed in ``folders`` (moved or vanished) only; the periodic reconcile keeps its time."""
        paths = [path for folder in folders for path in changed_paths(self.settings, self.catalog, under=folder)]
        tasks = self.queues.enqueue_paths(paths, self.settings.index_batch_notes, RECONCILE_PRIORITY)
        log.info("reconcile of %d moved or vanished folders: %d notes in %d tasks", len(folders), len(paths), tasks)

    def redis_restarted(self) -> bool:
        """Whether Redis is a new run since the last check (once a second). A killed Redis comes back from
        its append-only file, but with ``appendfsync everysec`` it may have held its last writes back (up to
        2 s while a slow fsync runs) and lost a queued task or two: the reconcile re-enqueues what the
        catalog does not have yet (a task queued twice costs nothing, an unchanged note is skipped)."""
        if time.monotonic() < self.next_redis_check:
            return False
        self.next_redis_check = time.monotonic() + 1.0
        run = self.queues.redis_run_id()
        seen, self.redis_run = self.redis_run, run
        return seen is not None and seen != run

    def backlog(self) -> bool:
        """Index tasks still waiting: a periodic reconcile then waits (it would queue the same notes again and
        restart the first index's progress); a Redis restart or a folder event reconciles at once."""
        if self.queues.index.pending_count() == 0:
            return False
        self.next_reconcile = time.monotonic() + 60
        return True

    def state(self) -> dict[str, object]:
        return {"pending": len(self.debouncer.pending), "last_reconcile": self.last_reconcile}

    def flush(self) -> None:
        """Emit debounced events; run the reconcile when it is due, a folder changed or Redis restarted."""
        forced = self.redis_restarted() or self.debouncer.rescan.is_set()
        if forced or (time.monotonic() >= self.next_reconcile and not self.backlog()):
            self.debouncer.rescan.clear()
            self.debouncer.take_folders()  # the whole vault's reconcile covers them
            self.reconcile()
        elif folders := self.debouncer.take_folders():
            self.reconcile_folders(folders)
        elif not self.last_reconcile:
            # Started on a previous run's backlog (stopped mid-first-index): the progress and ETA from now on.
            self.reconcile(enqueue=False)
        due = self.debouncer.due()
        if due:
            log.info("events: syncing %d notes", len(due))
            self.queues.enqueue_paths(due, self.settings.index_batch_notes, EVENT_PRIORITY)


def main() -> None:
    settings = load_settings()
    setup_logging(settings, "watcher")
    watch_parent()  # gone with the supervisor, even one killed -9
    stop = stop_on_signals()
    watcher = Watcher(settings, Queues(settings), Catalog(settings.catalog_path))
    observer = observe(settings, watcher.debouncer)
    observer.start()
    flusher = threading.Thread(target=_flush_loop, args=(watcher, stop), name="flush", daemon=True)
    flusher.start()
    try:
        run_until_stopped(settings, "watcher", stop, details=lambda: watcher.state())
    finally:
        observer.stop()
        observer.join()


def observe(settings: Settings, handler: FileSystemEventHandler) -> Observer:
    """An observer (not started) of the vault's tree that hands ``handler`` the ``EVENTS`` only."""
    observer = Observer()
    observer.schedule(handler, str(settings.vault), recursive=True, event_filter=list(EVENTS))
    return observer


def _flush_loop(watcher: Watcher, stop: threading.Event) -> None:
    tick = min(0.25, watcher.settings.debounce_seconds / 2)
    while not stop.is_set():
        try:
            watcher.flush()
        except redis.ConnectionError as exc:  # Redis restarting: the reconcile after its return finds these edits
            watcher.debouncer.rescan.set()
            LINK.lost(exc)
        except Exception:  # catalog busy: the next tick or reconcile catches up
            log.exception("flush failed")
        stop.wait(tick)


if __name__ == "__main__":
    main()
