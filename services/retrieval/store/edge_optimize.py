"""The Edge shard's search graphs (HNSW) built beside the live shard, in a child process (#34).

A shard that ``obsirag up`` fills stays one plain segment, which every search scans whole: 18 ms p50 and
55 ms p95 at 121,000 points (20,000 notes), growing with the vault; optimized, 1.4 / 4.8 ms. But Edge's
``optimize()`` holds the GIL for its whole run (490 s for those 121,000 points on this 2-core machine): in
the indexer it would stop every search for minutes. So the shard is copied into a folder of its own (writes
wait only for the copy's second pass, ``shard_copy``), a child process optimizes the copy, the writes made
meanwhile are replayed on it, and it becomes the live shard where it is (``live.json`` names its folder).
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from qdrant_edge import EdgeShard, UpdateOperation

from services.lifeline import die_with_parent
from services.retrieval.store.edge_folder import (
    BUILT_PREFIX,
    LIVE_FILE,
    MODEL_FILE,
    OPTIMIZED_FILE,
    SHARD_DIR,
    SWITCH_FILE,
    finish_switch,
    live_dir,
    load_shard,
    read_model,
    remove_trash,
    to_trash,
    write_json,
)
from services.retrieval.store.page_cache import warm_in_background
from services.retrieval.store.shard_copy import copy_changes, copy_unlocked

log = logging.getLogger(__name__)

EARLIER_COPY_DIR = "optimizing"  # where an earlier version optimized its copy: a crash may have left one
OPTIMIZE_AFTER_POINTS = 20_000  # below, a plain scan costs a few ms: not worth minutes of a processor
_CHILD = "import sys; from services.retrieval.store.edge_folder import optimize_shard; optimize_shard(*sys.argv[1:])"


class OptimizeBeside:
    """``EdgeStore``'s optimization beside the live shard, and the switch it shares with a rebuild's ``swap_in``:
    it uses the store's folder, shard and locks."""

    path: Path
    _shard: EdgeShard | None
    _guard: Any  # the store's ReadWriteLock
    _lock_handle: Any  # None once closed
    _reading: Any  # the store's context managers
    _writing: Any
    _journal: list[UpdateOperation] | None = None  # the writes since the copy, while one is optimized
    _generation = 0  # bumped when the shard is replaced: an optimized copy of the old one is dropped
    # Points written since the last build (read from ``OPTIMIZED_FILE`` at the first use): a point written
    # again (an edit, entities set after the note was indexed) leaves its built segment for the plain one just
    # as a new point goes there, though the shard's count does not grow. At 50,000 notes NER's late entities
    # had moved an estimated 40-50 % of the points to the plain segment, never built: scanned, held in memory.
    _written: int | None = None
    _journal_written = 0
    _keep_warm = False  # the files of each new shard read into the page cache (``EdgeStore.keep_warm``)

    def _apply(self, shard: EdgeShard, operation: UpdateOperation, points: int = 0) -> None:
        """``operation`` on ``shard``; ``points``: how many points it writes (deletions write none)."""
        written = self._written_so_far(shard)  # before the update: a first count reads the shard's points
        shard.update(operation)
        self._written = written + points
        if self._journal is not None:
            self._journal.append(operation)
            self._journal_written += points

    def _written_so_far(self, shard: EdgeShard | None) -> int:
        """Points written since the last build: all of them for a shard never built; for a record made before
        this count, the points added since (what it counted)."""
        if self._written is None:
            try:
                record = json.loads((self.path / OPTIMIZED_FILE).read_text(encoding="utf-8"))
                built = int(record["points"])
            except (FileNotFoundError, ValueError, KeyError):
                record, built = {}, 0
            points = shard.info().points_count if shard is not None else 0
            self._written = int(record.get("written", max(0, points - built)))
        return self._written

    def _save_written(self) -> None:
        """Keep the count for the next start (at a close; a crash loses the writes since the last close)."""
        record = self.path / OPTIMIZED_FILE
        if self._written is not None and record.exists():
            write_json(record, {**json.loads(record.read_text(encoding="utf-8")), "written": self._written})

    def _shard_replaced(self) -> None:
        """A reset or a rebuild's switch: an optimization under way was of the shard that goes, and the new one
        was never optimized."""
        self._generation += 1
        (self.path / OPTIMIZED_FILE).unlink(missing_ok=True)
        self._written = None

    def _switch_to(self, folder: str) -> None:
        """Under the exclusive lock: the shard in ``folder`` (a rebuild's ``next/``) replaces the live one;
        ``switch.json`` marks the renames, so a crash between them is finished at the next open."""
        if self._shard is not None:
            self._shard.close()
            self._shard = None
        write_json(self.path / SWITCH_FILE, {"from": folder})
        finish_switch(self.path)
        self._shard = load_shard(self.path / SHARD_DIR)
        if self._keep_warm:  # closed after a rebuild: Edge dropped its pages
            warm_in_background(self.path / SHARD_DIR)
        # The old shard (2.7 GB at 50,000 notes) is deleted by the caller once the lock is released: searches
        # waited for its deletion and timed out (#34); a crash before leaves trash, removed at the next open.

    def points_to_optimize(self) -> int:
        """Points written since the shard was last optimized, new or written again (all of them if never)."""
        with self._reading() as shard:
            return self._written_so_far(shard)

    def optimize_beside(self) -> bool:
        """Optimize a copy of the shard in a child process and put it in place; False when the shard was
        replaced or closed meanwhile (the copy is dropped)."""
        drop_leftover(self.path)
        built = self.path / f"{BUILT_PREFIX}{uuid.uuid4().hex[:12]}"
        with self._writing() as shard:
            if shard is None:
                return False
            generation, live, flushed = self._generation, live_dir(self.path), time.time_ns()
            shard.flush()  # from here on, each write stamps its file's time (``shard_copy``)
        first = copy_unlocked(live, built, flushed)  # writes go on; a shard replaced meanwhile is seen below
        with self._writing() as shard:
            if shard is None or generation != self._generation:
                shutil.rmtree(built, ignore_errors=True)
                return False
            shard.flush()
            copy_changes(live, built, first)
            self._journal, points = [], shard.info().points_count
            self._journal_written = 0
            recorded = read_model(self.path / MODEL_FILE)
        began = time.monotonic()
        try:
            subprocess.run(
                [sys.executable, "-c", _CHILD, str(built), str(recorded.dim if recorded else 0)],
                check=True,
                stdin=subprocess.DEVNULL,
                preexec_fn=die_with_parent(),
            )
            return self._put_in_place(built, generation, points, time.monotonic() - began)
        finally:
            self._journal = None
            drop_leftover(self.path)

    def _put_in_place(self, built: Path, generation: int, points: int, seconds: float) -> bool:
        """The built shard, loaded once, takes the writes made since its copy and becomes the live shard where it
        is. Edge's load holds the GIL (every thread of the process waits, ~4 s at 50,000 notes); loading it a
        second time after a rename, under the exclusive lock, made the saves of an idle vault wait 8-10 s."""
        shard = load_shard(built)
        replayed = self._replay(shard, 0)  # most of them, while writes go on
        with self._guard.exclusive():  # searches and writes wait for the last few writes and a flush
            if self._lock_handle is None or self._shard is None or generation != self._generation:
                shard.close()
                return False
            self._replay(shard, replayed)
            shard.flush()
            old, old_dir, self._shard = self._shard, live_dir(self.path), shard
            write_json(self.path / LIVE_FILE, {"dir": built.name})  # the switch: atomic
            self._written = self._journal_written  # written meanwhile: replayed into the built shard's plain part
            write_json(self.path / OPTIMIZED_FILE, {"points": points, "written": self._written})
        old.close()
        to_trash(self.path, old_dir)
        if self._keep_warm:  # built by a child process: its pages are not this process's yet
            warm_in_background(built)
        remove_trash(self.path)
        log.info("search graphs built for %d points in %.0f s, beside the live shard", points, seconds)
        return True

    def _replay(self, shard: EdgeShard, start: int) -> int:
        """The journal's writes from ``start`` on (those made so far) on ``shard``; returns where it stopped."""
        pending = (self._journal or [])[start:]  # a copy: writes append to the journal meanwhile
        for operation in pending:
            shard.update(operation)
        return start + len(pending)


def unfinished_builds(path: Path) -> list[Path]:
    """The copies being built beside the live shard, or left by a build that did not finish (a crash, a shard
    replaced meanwhile), and the shard a switch left behind (a crash before its deletion)."""
    live = live_dir(path)
    folders = [path / SHARD_DIR, path / EARLIER_COPY_DIR, *path.glob(f"{BUILT_PREFIX}*")]
    return [folder for folder in folders if folder.exists() and folder != live]


def drop_leftover(path: Path) -> None:
    """The copies ``unfinished_builds`` lists (the live shard has every write)."""
    for folder in unfinished_builds(path):
        shutil.rmtree(folder, ignore_errors=True)
