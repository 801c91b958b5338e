"""The learner's memory: notes it processed (and why it skipped others), note pairs it considered, artifacts it wrote.

A restart resumes where the learner stopped because every decision is read back from here.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime

from services.catalog._base import Table
from services.catalog.models import LearnedNote, LearnOutcome, NoteStatus, SynapsePair


class LearnerTable(Table):
    # --- notes ---------------------------------------------------------------------------

    def record_learned(
        self,
        path: str,
        outcome: LearnOutcome,
        now: datetime,
        reason: str = "",
        artifact: str | None = None,
        worked: bool = True,
    ) -> None:
        """Record an attempt on ``path``. ``worked``: it did the work (resets the reprocessing delay)."""
        processed = now.isoformat() if worked else None
        with self._write() as conn:
            conn.execute(
                "INSERT INTO learned_notes (path, processed_at, checked_at, outcome, reason, artifact) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET "
                "processed_at = COALESCE(excluded.processed_at, processed_at), checked_at = excluded.checked_at, "
                "outcome = excluded.outcome, reason = excluded.reason, "
                "artifact = COALESCE(excluded.artifact, artifact)",
                (path, processed, now.isoformat(), LearnOutcome(outcome).value, reason, artifact),
            )

    def learned_note(self, path: str) -> LearnedNote | None:
        row = self._conn().execute("SELECT * FROM learned_notes WHERE path = ?", (path,)).fetchone()
        return _learned(row) if row else None

    def learned_notes(self) -> list[LearnedNote]:
        return [_learned(row) for row in self._conn().execute("SELECT * FROM learned_notes ORDER BY path")]

    def never_learned(self, paths: Sequence[str]) -> list[str]:
        """Those of ``paths`` the learner never looked at, in the given order."""
        seen = {row[0] for row in self._conn().execute("SELECT path FROM learned_notes")}
        return [path for path in paths if path not in seen]

    def progress_counts(self) -> tuple[int, dict[str, int]]:
        """The indexed notes the learner never looked at, and its notes by outcome: two aggregate queries (the
        dashboard's learner panel read every note's row for them, 150 ms at 50,000 notes)."""

        def count() -> tuple[int, dict[str, int]]:
            conn = self._conn()
            unlearned = "SELECT COUNT(*) FROM notes WHERE status = ? AND path NOT IN (SELECT path FROM learned_notes)"
            remaining = int(conn.execute(unlearned, (NoteStatus.INDEXED.value,)).fetchone()[0])
            rows = conn.execute("SELECT outcome, COUNT(*) FROM learned_notes GROUP BY outcome")
            return remaining, {str(outcome): int(n) for outcome, n in rows}

        remaining, outcomes = self._while_unchanged(("progress",), count, counters="notes, learned")
        return remaining, dict(outcomes)

    # --- note pairs ----------------------------------------------------------------------

    def pair_seen(self, a: str, b: str) -> bool:
        first, second = sorted((a, b))
        sql = "SELECT 1 FROM synapse_pairs WHERE a = ? AND b = ?"
        return self._conn().execute(sql, (first, second)).fetchone() is not None

    def record_pair(self, pair: SynapsePair) -> bool:
        """Remember a pair (stored with ``a`` < ``b``); False when it was already known (nothing changes)."""
        first, second = sorted((pair.a, pair.b))
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO synapse_pairs (a, b, score, outcome, reason, artifact, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (a, b) DO NOTHING",
                (
                    first,
                    second,
                    pair.score,
                    pair.outcome.value,
                    pair.reason,
                    pair.artifact,
                    pair.created_at.isoformat(),
                ),
            )
        return cursor.rowcount == 1

    def update_pair(self, a: str, b: str, outcome: LearnOutcome, reason: str = "", artifact: str | None = None) -> None:
        first, second = sorted((a, b))
        with self._write() as conn:
            conn.execute(
                "UPDATE synapse_pairs SET outcome = ?, reason = ?, artifact = ? WHERE a = ? AND b = ?",
                (LearnOutcome(outcome).value, reason, artifact, first, second),
            )

    def synapse_pairs(self) -> list[SynapsePair]:
        rows = self._conn().execute("SELECT * FROM synapse_pairs ORDER BY a, b")
        return [_pair(row) for row in rows]

    # --- artifacts -----------------------------------------------------------------------

    def record_artifact(
        self, path: str, kind: str, source: str | None, entity_tags: Sequence[str], now: datetime
    ) -> None:
        """Insert or update a generated file's row (its creation date is kept)."""
        tags = json.dumps(sorted(set(entity_tags)), ensure_ascii=False)
        with self._write() as conn:
            conn.execute(
                "INSERT INTO artifacts (path, kind, source, entity_tags, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET source = excluded.source, "
                "entity_tags = excluded.entity_tags, updated_at = excluded.updated_at",
                (path, kind, source, tags, now.isoformat(), now.isoformat()),
            )

    def artifacts(self, kind: str | None = None) -> list[dict[str, object]]:
        """Rows of generated files (newest first): path, kind, source, entity_tags, created_at, updated_at."""
        sql = "SELECT * FROM artifacts" + (" WHERE kind = ?" if kind else "") + " ORDER BY updated_at DESC, path"
        rows = self._conn().execute(sql, (kind,) if kind else ())
        return [{**dict(row), "entity_tags": json.loads(row["entity_tags"])} for row in rows]

    def forget_artifact(self, path: str) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM artifacts WHERE path = ?", (path,))


def _stamp(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _learned(row: sqlite3.Row) -> LearnedNote:
    return LearnedNote(
        path=row["path"],
        processed_at=_stamp(row["processed_at"]),
        checked_at=_stamp(row["checked_at"]),
        outcome=LearnOutcome(row["outcome"]),
        reason=row["reason"],
        artifact=row["artifact"],
    )


def _pair(row: sqlite3.Row) -> SynapsePair:
    data = dict(row)
    data["created_at"] = datetime.fromisoformat(data["created_at"])
    return SynapsePair.model_validate(data)
