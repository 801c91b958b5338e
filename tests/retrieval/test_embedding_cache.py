"""The embedding cache's file: the compact layout, and a cache written in the earlier one carried over; the fixed
reference questions' vectors kept across restarts (the memory's means, the English axis)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from services.retrieval import crosslingual
from services.retrieval.embedding_cache import PRUNE_GRACE_SECONDS, EmbeddingCache, encode_cached, text_digest
from services.retrieval.lexical import analyze

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


class _Counting:
    """The model, counting what it embeds."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.queries = self.passages = 0

    def encode_query(self, text: str) -> list[float]:
        self.queries += 1
        return self.inner.encode_query(text)

    def encode(self, texts: list[str]) -> np.ndarray:
        self.passages += len(texts)
        return self.inner.encode(texts)


def test_fixed_queries_are_embedded_once_kept_apart_from_passages_and_through_pruning(tmp_path: Path, embedder) -> None:
    counting, texts = _Counting(embedder), ["Où ai-je rangé les clés ?", "When is the meeting?"]
    cache = EmbeddingCache(tmp_path / "e.sqlite3", embedder.name, embedder.dim)
    first = encode_cached(counting, texts, cache, queries=True, uses="obsirag:test")
    assert counting.queries == 2 and counting.passages == 0
    assert np.allclose(first[0], embedder.encode_query(texts[0]), atol=1e-6)
    assert cache.lookup(texts) == {}  # the same words as a note's passage are not the query's vector
    cache.close()

    again = EmbeddingCache(tmp_path / "e.sqlite3", embedder.name, embedder.dim)  # the next start
    assert again.prune(now=time.time() + 10 * PRUNE_GRACE_SECONDS) == 0  # kept by their "note"
    assert np.array_equal(encode_cached(counting, texts, again, queries=True, uses="obsirag:test"), first)
    assert counting.queries == 2  # nothing embedded again
    again.close()


def test_the_english_axis_is_computed_once_per_model_across_restarts(tmp_path: Path, embedder) -> None:
    counting = _Counting(embedder)
    saved = dict(crosslingual._AXES)
    try:
        crosslingual._AXES.clear()
        cache = EmbeddingCache(tmp_path / "e.sqlite3", embedder.name, embedder.dim)
        axis = crosslingual.english_axis(counting, cache)
        assert counting.queries == 2 * len(crosslingual.PAIRS)
        crosslingual._AXES.clear()  # a new process
        assert np.array_equal(crosslingual.english_axis(counting, cache), axis)
        assert counting.queries == 2 * len(crosslingual.PAIRS) and abs(float(np.linalg.norm(axis)) - 1) < 1e-5
        cache.close()
    finally:
        crosslingual._AXES.clear()
        crosslingual._AXES.update(saved)


def test_english_stop_words_are_spacys_read_without_importing_spacy() -> None:
    from spacy.lang.en.stop_words import STOP_WORDS

    assert crosslingual.english_common() == frozenset(analyze(" ".join(sorted(STOP_WORDS))))
    probe = "from services.retrieval.crosslingual import english_common; import sys; english_common(); "
    probe += "sys.exit('spacy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", probe], cwd=Path(__file__).parents[2], check=False).returncode == 0
