"""The extraction cache's pace: each document's duration, and the median of the last ones read."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from services.attachments.cache import DURATIONS_KEPT, ExtractionCache, read_pace


def read(cache: ExtractionCache, path: str, seconds: float) -> None:
    cache.start(path, "h", at=time.time() - seconds)
    cache.finish(path)


def test_the_pace_is_the_median_of_the_last_documents_once_three_are_known(tmp_path: Path) -> None:
    cache = ExtractionCache(tmp_path / "extractions.sqlite3")
    assert read_pace(tmp_path / "missing.sqlite3") is None
    read(cache, "a.png", 10)
    read(cache, "b.png", 500)  # a 300-page scan does not make every screenshot look slow
    assert cache.seconds_per_document() is None
    read(cache, "c.png", 12)
    assert 11.9 < cache.seconds_per_document() < 12.5
    for i in range(20):  # only the last 20 count: the old pace is forgotten
        read(cache, f"s{i}.png", 2)
    assert 1.9 < read_pace(tmp_path / "extractions.sqlite3") < 2.5
    cache.finish("never-started.png")  # nothing under way for it: no duration invented
    assert cache.under_way() == []
    cache.close()


def test_only_the_last_durations_are_kept(tmp_path: Path) -> None:
    cache = ExtractionCache(tmp_path / "extractions.sqlite3")
    for i in range(DURATIONS_KEPT + 5):
        read(cache, f"d{i}.png", 1)
    count = cache._db.execute("SELECT COUNT(*) FROM durations").fetchone()[0]
    assert count == DURATIONS_KEPT
    cache.close()


def test_a_cache_file_from_before_the_durations_opens_and_keeps_its_text(tmp_path: Path) -> None:
    path = tmp_path / "extractions.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE extractions (content_hash TEXT PRIMARY KEY, kind TEXT NOT NULL, extraction TEXT NOT NULL,"
        " created REAL NOT NULL) WITHOUT ROWID;"
        "CREATE TABLE progress (path TEXT PRIMARY KEY, content_hash TEXT NOT NULL, done INTEGER NOT NULL,"
        " total INTEGER NOT NULL, started REAL NOT NULL, updated REAL NOT NULL) WITHOUT ROWID;"
        "INSERT INTO extractions VALUES ('abc', 'pdf', '{}', 1.0);"
    )
    old.commit()
    old.close()
    cache = ExtractionCache(path)
    assert cache.count() == 1 and cache.seconds_per_document() is None
    read(cache, "a.png", 3)
    cache.close()
