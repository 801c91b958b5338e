"""The embedding cache's file: the compact layout, and a cache written in the earlier one carried over."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from services.retrieval.embedding_cache import EmbeddingCache, text_digest

EARLIER = """
CREATE TABLE vectors (
    model TEXT NOT NULL, digest BLOB NOT NULL, vector BLOB NOT NULL, used_at REAL NOT NULL,
    PRIMARY KEY (model, digest)
) WITHOUT ROWID;
CREATE INDEX vectors_used ON vectors (used_at);
"""


def _layout(path: Path) -> tuple[str, int]:
    db = sqlite3.connect(path)
    try:
        sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'vectors'").fetchone()[0]
        return sql, db.execute("PRAGMA page_size").fetchone()[0]
    finally:
        db.close()


def test_a_new_cache_keeps_its_vectors_in_a_rowid_table_on_8_kb_pages(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "e.sqlite3", "m", 3)
    cache.close()
    sql, page_size = _layout(tmp_path / "e.sqlite3")
    assert "WITHOUT ROWID" not in sql and page_size == 8192


def test_a_cache_in_the_earlier_layout_is_carried_over_with_its_vectors(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(EARLIER)
    vectors = np.arange(6, dtype=np.float32).reshape(2, 3)
    db.executemany(
        "INSERT INTO vectors VALUES ('m', ?, ?, 1.0)",
        [(text_digest(text), row.tobytes()) for text, row in zip(["un", "deux"], vectors, strict=True)],
    )
    db.commit()
    db.close()
    cache = EmbeddingCache(path, "m", 3)
    try:
        assert "WITHOUT ROWID" not in _layout(path)[0]
        found = cache.lookup(["deux", "trois", "un"])
        assert set(found) == {0, 2} and found[0].tolist() == [3.0, 4.0, 5.0]
        cache.store(["trois"], vectors[:1])
        assert cache.count() == 3
        again = EmbeddingCache(path, "m", 3)  # a second process opening it: nothing to carry any more
        assert again.count() == 3
        again.close()
    finally:
        cache.close()


def test_the_write_ahead_log_shrinks_back_after_a_big_write(tmp_path: Path, monkeypatch) -> None:
    """A first index writes its vectors in big transactions: the WAL must not keep that size for good."""
    from services.retrieval import embedding_cache

    monkeypatch.setattr(embedding_cache, "WAL_LIMIT_BYTES", 256 * 1024)
    cache = EmbeddingCache(tmp_path / "cache.sqlite3", "m", 384)
    try:
        texts = [f"texte {i}" for i in range(6_000)]  # ~9 MB of vectors in one transaction
        cache.store(texts, np.ones((len(texts), 384), dtype=np.float32))
        wal = tmp_path / "cache.sqlite3-wal"
        assert wal.stat().st_size > 1024 * 1024
        cache._db.execute("PRAGMA wal_checkpoint")  # what SQLite runs by itself every 1,000 pages
        cache.store(["encore"], np.ones((1, 384), dtype=np.float32))  # the next write after the checkpoint
        assert wal.stat().st_size <= 256 * 1024
    finally:
        cache.close()
