"""The marks table: questions the user's clicks recorded against notes (opened, « c'était ça », « pas ça »).

Each mark keeps its question's vector and the model that made it: the search embeds a mark's question once
with its own model (``vectors``) and ignores vectors another model made. ``revision`` changes with every
write, so that a search holding the marks in memory reloads them only when they changed.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np

from services.catalog._base import Table
from services.catalog.models import Mark, Verdict

REVISION_KEY = "marks_revision"


class MarksTable(Table):
    def add_mark(self, question: str, path: str, verdict: Verdict, now: datetime | None = None) -> int:
        """Record a mark; the same question, note and verdict again only refreshes its date."""
        stamp = (now or datetime.now(UTC)).isoformat()
        with self._write() as conn:
            row = conn.execute(
                "SELECT id FROM marks WHERE question = ? AND path = ? AND verdict = ?", (question, path, verdict.value)
            ).fetchone()
            if row is not None:
                conn.execute("UPDATE marks SET created_at = ? WHERE id = ?", (stamp, row[0]))
                return int(row[0])
            cursor = conn.execute(
                "INSERT INTO marks (question, path, verdict, created_at) VALUES (?, ?, ?, ?)",
                (question.strip(), path, verdict.value, stamp),
            )
            _bump(conn)
        return int(cursor.lastrowid or 0)

    def mark_turn_source(self, turn_id: int, path: str, verdict: Verdict, now: datetime | None = None) -> int | None:
        """Record a mark for a chat turn's question against one of its vault sources (None: no such turn or
        source): the question is the one asked, never one the caller supplies."""
        row = self._conn().execute("SELECT question, sources FROM turns WHERE id = ?", (turn_id,)).fetchone()
        if row is None or path not in {s.get("path") for s in json.loads(row[1] or "[]") if not s.get("url")}:
            return None
        return self.add_mark(row[0], path, verdict, now)

    def list_marks(self) -> list[Mark]:
        rows = self._conn().execute("SELECT id, question, path, verdict, created_at FROM marks ORDER BY id DESC")
        return [
            Mark(id=r[0], question=r[1], path=r[2], verdict=Verdict(r[3]), created_at=datetime.fromisoformat(r[4]))
            for r in rows.fetchall()
        ]

    def forget_mark(self, mark_id: int) -> bool:
        with self._write() as conn:
            gone = conn.execute("DELETE FROM marks WHERE id = ?", (mark_id,)).rowcount > 0
            _bump(conn)
        return gone

    def forget_marks(self) -> int:
        with self._write() as conn:
            count = conn.execute("DELETE FROM marks").rowcount
            _bump(conn)
        return count

    def marks_revision(self) -> str:
        row = self._conn().execute("SELECT value FROM meta WHERE key = ?", (REVISION_KEY,)).fetchone()
        return row[0] if row else "0"

    def mark_vectors(self, model: str) -> list[tuple[Mark, np.ndarray | None]]:
        """Every mark with its question's vector by ``model`` (None: not embedded by that model yet)."""
        rows = self._conn().execute("SELECT id, question, path, verdict, created_at, model, vector FROM marks")
        return [
            (
                Mark(id=r[0], question=r[1], path=r[2], verdict=Verdict(r[3]), created_at=datetime.fromisoformat(r[4])),
                np.frombuffer(r[6], dtype=np.float32) if r[5] == model and r[6] is not None else None,
            )
            for r in rows.fetchall()
        ]

    def set_mark_vector(self, mark_id: int, model: str, vector: np.ndarray) -> None:
        """Store a mark's question vector (no revision change: the marks said the same)."""
        blob = np.asarray(vector, dtype=np.float32).tobytes()
        with self._write() as conn:
            conn.execute("UPDATE marks SET model = ?, vector = ? WHERE id = ?", (model, blob, mark_id))


def _bump(conn: object) -> None:
    conn.execute(  # type: ignore[attr-defined]
        "INSERT INTO meta (key, value) VALUES (?, '1')"
        " ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        (REVISION_KEY,),
    )
