"""Passage vectors kept by (model, exact text), so that no text is embedded twice.

A renamed note or folder, a reindex with the same model, a restart after a crash: the chunks' texts
are the same, so their vectors come from here. The cache is a SQLite file in the data dir; it records
which note uses which text (``uses``), and ``prune`` drops texts no note has used for ``grace`` seconds
(a rename deletes the old path before or after it indexes the new one: the grace keeps its vectors),
then the least recently used of the unused ones above ``max_entries``: a text a note uses stays.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the embedding module's and the settings' types only: it needs nothing of them
    from services.config import Settings
    from services.retrieval.embedding import Embedder

PRUNE_GRACE_SECONDS = 24 * 3600.0
PRUNE_EVERY_SECONDS = 60.0

# A rowid table on 8 kB pages: ~1.7 kB a vector on disk. WITHOUT ROWID, which keeps whole rows in its key's
# b-tree, took 4.7 kB fresh and 5.3 kB after a day of inserts and deletes (random keys split its pages).
_PAGE_SIZE = 8192
_VECTORS = """
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL, digest BLOB NOT NULL, vector BLOB NOT NULL, used_at REAL NOT NULL,
    PRIMARY KEY (model, digest)
);"""
_SCHEMA = f"""{_VECTORS}
CREATE TABLE IF NOT EXISTS uses (
    model TEXT NOT NULL, path TEXT NOT NULL, digest BLOB NOT NULL, PRIMARY KEY (model, path, digest)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS uses_digest ON uses (model, digest);
CREATE INDEX IF NOT EXISTS vectors_used ON vectors (used_at);
"""


_UNUSED = "NOT EXISTS (SELECT 1 FROM uses u WHERE u.model = vectors.model AND u.digest = vectors.digest)"


def _rowid_vectors(db: sqlite3.Connection) -> None:
    """A cache written before 2026-12 holds its vectors WITHOUT ROWID: copied into the compact table, once
    (~12 s at 100,000 vectors; the freed pages are reused as the cache grows, the processes opening it meanwhile
    wait for the copy)."""
    layout = "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'vectors'"
    if "WITHOUT ROWID" not in (db.execute(layout).fetchone() or [""])[0]:
        return
    with db:
        db.execute("BEGIN IMMEDIATE")
        if "WITHOUT ROWID" not in (db.execute(layout).fetchone() or [""])[0]:
            return  # another process copied it while this one waited
        db.execute("ALTER TABLE vectors RENAME TO vectors_without_rowid")
        db.execute(_VECTORS)
        db.execute("INSERT INTO vectors SELECT model, digest, vector, used_at FROM vectors_without_rowid")
        db.execute("DROP TABLE vectors_without_rowid")


def text_digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


WAL_LIMIT_BYTES = 64 * 1024 * 1024


class EmbeddingCache:
    """One model's vectors in a shared SQLite file; safe to call from several threads."""

    def __init__(self, path: Path, model: str, dim: int, max_entries: int = 100_000) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.model, self.dim, self.max_entries = model, dim, max_entries
        # timeout: another process may be carrying an earlier cache over (~12 s at 100,000 vectors)
        self._db = sqlite3.connect(path, timeout=120, check_same_thread=False, isolation_level=None)
        self._db.execute(f"PRAGMA page_size={_PAGE_SIZE}")  # a new file's only: set before its first table
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        # A WAL keeps the size of its biggest transaction for good (a first index's carry-over: 1.4 GB at
        # 50,000 notes) unless told to shrink once checkpointed.
        self._db.execute(f"PRAGMA journal_size_limit={WAL_LIMIT_BYTES}")
        _rowid_vectors(self._db)
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self._next_prune = 0.0

    @classmethod
    def of(cls, settings: Settings, embedder: Embedder) -> EmbeddingCache:
        """The data dir's cache, read and written for ``embedder``'s model."""
        return cls(settings.embedding_cache_path, embedder.name, embedder.dim, settings.embedding_cache_entries)

    def lookup(self, texts: Sequence[str], now: float | None = None) -> dict[int, np.ndarray]:
        """Vectors known for ``texts``, by index in ``texts``; marks them used."""
        digests = [text_digest(text) for text in texts]
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(digests), 500):  # SQLite's bound-parameter limit
                part = digests[start : start + 500]
                rows = self._db.execute(
                    f"SELECT digest, vector FROM vectors WHERE model = ? AND digest IN ({','.join('?' * len(part))})",
                    [self.model, *part],
                ).fetchall()
                found.update((digest, np.frombuffer(blob, dtype=np.float32)) for digest, blob in rows)
            if found:
                self._db.executemany(
                    "UPDATE vectors SET used_at = ? WHERE model = ? AND digest = ?",
                    [(now or time.time(), self.model, digest) for digest in found],
                )
        return {i: found[d] for i, d in enumerate(digests) if d in found and len(found[d]) == self.dim}

    def store(self, texts: Sequence[str], vectors: np.ndarray, now: float | None = None) -> None:
        rows = [
            (self.model, text_digest(text), np.asarray(vector, dtype=np.float32).tobytes(), now or time.time())
            for text, vector in zip(texts, vectors, strict=True)
        ]
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)

    def record_uses(self, path: str, texts: Sequence[str]) -> None:
        """``path``'s chunks are now exactly ``texts`` (replaces what it used before)."""
        with self._lock, self._db:
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM uses WHERE model = ? AND path = ?", (self.model, path))
            self._db.executemany(
                "INSERT OR IGNORE INTO uses VALUES (?, ?, ?)", [(self.model, path, text_digest(t)) for t in texts]
            )

    def forget_uses(self, path: str | None = None) -> None:
        """``path`` (every path when None) uses no text any more; its vectors stay until ``prune``."""
        with self._lock:
            if path is None:
                self._db.execute("DELETE FROM uses WHERE model = ?", (self.model,))
            else:
                self._db.execute("DELETE FROM uses WHERE model = ? AND path = ?", (self.model, path))

    def forget_other_models(self) -> None:
        """After a switch to this model: the other models' texts are unused (pruned after the grace)."""
        with self._lock:
            self._db.execute("DELETE FROM uses WHERE model != ?", (self.model,))

    def prune(self, now: float | None = None, grace: float = PRUNE_GRACE_SECONDS) -> int:
        """Drop texts no note has used for ``grace`` seconds, then, above ``max_entries`` unused ones, the
        oldest of those (other models' first); returns how many went. A text a note uses is never dropped:
        a reindex with the same model embeds nothing, however big the vault."""
        now = now or time.time()
        with self._lock:
            before = self.count_all()
            self._db.execute(f"DELETE FROM vectors WHERE used_at < ? AND {_UNUSED}", (now - grace,))
            if self.count_all() > self.max_entries:  # cheap gate: the unused count is a scan
                excess = self._db.execute(f"SELECT COUNT(*) FROM vectors WHERE {_UNUSED}").fetchone()[0]
                excess -= self.max_entries
                if excess > 0:
                    self._db.execute(  # other models' vectors first, then the least recently used
                        "DELETE FROM vectors WHERE (model, digest) IN (SELECT model, digest FROM vectors "
                        f"WHERE {_UNUSED} ORDER BY model = ?, used_at LIMIT ?)",
                        (self.model, excess),
                    )
            return before - self.count_all()

    def prune_now_and_then(self, every: float = PRUNE_EVERY_SECONDS) -> int:
        """``prune`` at most once every ``every`` seconds: housekeeping, not a step of every sync (its scan
        of the unused texts takes ~0.2 s at 100,000 vectors, 250 s over a 20,000-note first index)."""
        if time.monotonic() < self._next_prune:
            return 0
        self._next_prune = time.monotonic() + every
        return self.prune()

    def count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM vectors WHERE model = ?", (self.model,)).fetchone()[0]

    def count_all(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]

    def close(self) -> None:
        self._db.close()


QUERY_KEY = "\x00query\x00"  # the prefix of a query's key: no passage (a note's text) starts with it


def encode_cached(
    embedder: Embedder, texts: list[str], cache: EmbeddingCache | None, queries: bool = False, uses: str = ""
) -> np.ndarray:
    """``texts``' vectors, those the cache holds for ``embedder``'s model read back, the others embedded and
    kept (a cache of another model is not used): a restart embeds no sentence twice.

    ``queries``: embedded as queries (``encode_query``) and kept under keys no passage has; ``uses``: the
    cache's "note" that keeps them through its pruning (fixed reference texts, recorded once)."""
    usable = cache if cache is not None and cache.model == embedder.name else None
    keys = [QUERY_KEY + text for text in texts] if queries else texts
    known = usable.lookup(keys) if usable else {}
    vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    for i, vector in known.items():
        vectors[i] = vector
    todo = [i for i in range(len(texts)) if i not in known]
    if todo:
        chosen = [texts[i] for i in todo]
        vectors[todo] = [embedder.encode_query(text) for text in chosen] if queries else embedder.encode(chosen)
        if usable:
            usable.store([keys[i] for i in todo], vectors[todo])
            if uses:
                usable.record_uses(uses, keys)
    return vectors
