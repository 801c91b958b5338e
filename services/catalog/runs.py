"""The runs tables: one row per indexing run, plus its named integer counters."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from datetime import UTC, datetime

from services.catalog._base import Table
from services.catalog.models import IndexRun

CHUNKS_EMBEDDED = "chunks_embedded"


class RunsTable(Table):
    """Runs: when each reconcile/batch started and ended, and what it did (counters)."""

    def start_run(self, kind: str, now: datetime | None = None) -> int:
        """Open a run (``kind``: "reconcile", "watch", "rebuild", …) and return its id."""
        started = (now or datetime.now(UTC)).isoformat()
        with self._write() as conn:
            cursor = conn.execute("INSERT INTO runs (kind, started_at) VALUES (?, ?)", (kind, started))
        return int(cursor.lastrowid or 0)

    def add_run_stats(self, run_id: int, **counters: int) -> None:
        """Add to the run's named counters (``notes_indexed=3, chunks_embedded=40``), creating them."""
        rows = [(run_id, name, int(value)) for name, value in counters.items()]
        with self._write() as conn:
            conn.executemany(
                "INSERT INTO run_stats (run_id, name, value) VALUES (?, ?, ?) "
                "ON CONFLICT (run_id, name) DO UPDATE SET value = value + excluded.value",
                rows,
            )

    def finish_run(self, run_id: int, error: str | None = None, now: datetime | None = None) -> None:
        finished = (now or datetime.now(UTC)).isoformat()
        with self._write() as conn:
            conn.execute("UPDATE runs SET finished_at = ?, error = ? WHERE id = ?", (finished, error, run_id))

    def last_runs(self, limit: int = 10) -> list[IndexRun]:
        """The most recent runs first, each with its counters."""
        with self._snapshot() as conn:
            runs = conn.execute("SELECT * FROM runs ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
            if not runs:
                return []
            stats = conn.execute("SELECT run_id, name, value FROM run_stats WHERE run_id >= ?", (runs[-1]["id"],))
            counters: dict[int, dict[str, int]] = defaultdict(dict)
            for run_id, name, value in stats:
                counters[run_id][name] = value
        return [_index_run(row, counters[row["id"]]) for row in runs]

    def total_counter(self, name: str, since_run: int | None = None) -> int:
        """Sum of counter ``name`` over all runs, or over runs ``since_run`` (inclusive) and later."""
        row = (
            self._conn()
            .execute(
                "SELECT COALESCE(SUM(value), 0) FROM run_stats WHERE name = ? AND run_id >= ?",
                (name, since_run or 0),
            )
            .fetchone()
        )
        return int(row[0])

    def total_chunks_embedded(self, since_run: int | None = None) -> int:
        """Chunks embedded over all runs, or since run ``since_run`` (inclusive)."""
        return self.total_counter(CHUNKS_EMBEDDED, since_run)


def _index_run(row: sqlite3.Row, counters: dict[str, int]) -> IndexRun:
    return IndexRun.model_validate({**dict(zip(row.keys(), row, strict=True)), "counters": counters})
