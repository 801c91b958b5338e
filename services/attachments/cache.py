"""Extracted text kept by content hash, and each file's extraction under way (pages done / total).

A SQLite file in the data dir (``<data>/extractions.sqlite3``), shared by the extract worker (which writes)
and the indexer, ``obsirag status`` and the dashboard (which read). Keyed by the file's sha256: a restart,
a rename or a reindex finds the text of an unchanged document and never reads (or OCRs) it again.
"""

from __future__ import annotations

import sqlite3
import statistics
import threading
import time
from pathlib import Path

from pydantic import BaseModel

from services.attachments.models import Extraction
from services.config import Language

_SCHEMA = """
CREATE TABLE IF NOT EXISTS extractions (
    content_hash TEXT PRIMARY KEY, kind TEXT NOT NULL, extraction TEXT NOT NULL, created REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS progress (
    path TEXT PRIMARY KEY, content_hash TEXT NOT NULL, done INTEGER NOT NULL, total INTEGER NOT NULL,
    started REAL NOT NULL, updated REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS durations (path TEXT NOT NULL, seconds REAL NOT NULL, finished REAL NOT NULL);
"""
PACE_SAMPLE = 20  # the last documents read set the pace: OCR of screenshots is not that of born-digital PDFs
PACE_LEAST = 3  # fewer finished documents than this: no estimate at all rather than a wild one
DURATIONS_KEPT = 100


class ExtractionProgress(BaseModel):
    """A file being read: ``done`` of ``total`` pages (``total`` 0 until the document is opened)."""

    path: str
    done: int
    total: int
    started: float
    updated: float

    @property
    def eta_seconds(self) -> float | None:
        if not self.done or self.total <= self.done:
            return None
        return (self.updated - self.started) / self.done * (self.total - self.done)

    def line(self, lang: Language = "en") -> str:
        """``obsirag status``'s line for it."""
        if lang == "fr":
            eta = f", fin dans {self.eta_seconds:.0f} s" if self.eta_seconds is not None else ""
            return f"lecture de {self.path} : {self.done}/{self.total or '?'} pages{eta}"
        eta = f", ETA {self.eta_seconds:.0f}s" if self.eta_seconds is not None else ""
        return f"reading {self.path}: {self.done}/{self.total or '?'} pages{eta}"


def read_extraction(path: Path, content_hash: str) -> Extraction | None:
    """One cached extraction, for the readers of the running system (MCP ``read_note``, the web)."""
    if not path.exists():
        return None
    cache = ExtractionCache(path)
    try:
        return cache.get(content_hash)
    finally:
        cache.close()


def read_pace(path: Path) -> float | None:
    """The median seconds per document of the last ones read (None before ``PACE_LEAST`` are known)."""
    if not path.exists():
        return None
    cache = ExtractionCache(path)
    try:
        return cache.seconds_per_document()
    finally:
        cache.close()


def read_progress(path: Path) -> list[ExtractionProgress]:
    """The files being read, for ``obsirag status`` and the dashboard (none when nothing was ever read)."""
    if not path.exists():
        return []
    cache = ExtractionCache(path)
    try:
        return cache.under_way()
    finally:
        cache.close()


class ExtractionCache:
    """Safe from several threads and processes (SQLite in WAL mode)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()

    def get(self, content_hash: str) -> Extraction | None:
        with self._lock:
            row = self._db.execute(
                "SELECT extraction FROM extractions WHERE content_hash = ?", (content_hash,)
            ).fetchone()
        return Extraction.model_validate_json(row[0]) if row else None

    def put(self, content_hash: str, extraction: Extraction) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO extractions VALUES (?, ?, ?, ?)",
                (content_hash, extraction.kind, extraction.model_dump_json(), time.time()),
            )

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM extractions").fetchone()[0]

    # --- progress of the files being read ------------------------------------------------------------

    def start(self, path: str, content_hash: str, at: float | None = None) -> None:
        now = time.time() if at is None else at
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO progress VALUES (?, ?, 0, 0, ?, ?)", (path, content_hash, now, now)
            )

    def advance(self, path: str, done: int, total: int) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE progress SET done = ?, total = ?, updated = ? WHERE path = ?", (done, total, time.time(), path)
            )

    def finish(self, path: str) -> None:
        """The file is read (or given up): its duration joins the pace of the documents still to read."""
        now = time.time()
        with self._lock:
            row = self._db.execute("SELECT started FROM progress WHERE path = ?", (path,)).fetchone()
            self._db.execute("DELETE FROM progress WHERE path = ?", (path,))
            if row is not None:
                self._db.execute("INSERT INTO durations VALUES (?, ?, ?)", (path, now - row[0], now))
                self._db.execute(
                    "DELETE FROM durations WHERE rowid NOT IN "
                    "(SELECT rowid FROM durations ORDER BY finished DESC LIMIT ?)",
                    (DURATIONS_KEPT,),
                )

    def seconds_per_document(self) -> float | None:
        """The median duration of the last ``PACE_SAMPLE`` documents read; None with fewer than ``PACE_LEAST``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT seconds FROM durations ORDER BY finished DESC LIMIT ?", (PACE_SAMPLE,)
            ).fetchall()
        return statistics.median(r[0] for r in rows) if len(rows) >= PACE_LEAST else None

    def clear_progress(self) -> None:
        with self._lock:
            self._db.execute("DELETE FROM progress")

    def in_progress(self, path: str, content_hash: str) -> bool:
        with self._lock:
            row = self._db.execute(
                "SELECT 1 FROM progress WHERE path = ? AND content_hash = ?", (path, content_hash)
            ).fetchone()
        return row is not None

    def under_way(self) -> list[ExtractionProgress]:
        with self._lock:
            rows = self._db.execute(
                "SELECT path, done, total, started, updated FROM progress ORDER BY started"
            ).fetchall()
        return [ExtractionProgress(path=r[0], done=r[1], total=r[2], started=r[3], updated=r[4]) for r in rows]

    def close(self) -> None:
        self._db.close()
