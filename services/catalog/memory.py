"""The memory tables: facts (with their superseded history), reminders, and the consolidation runs' queries.

Times are written in UTC so that SQL comparisons of the ISO strings are comparisons of instants.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from services.catalog._base import Table
from services.catalog.memory_models import ACTIVE, Fact, FactStatus, Reminder, ReminderStatus, normalise, sentence

MEMORY_RUN = "memory"
_FACT_COLUMNS = (
    "subject",
    "predicate",
    "value",
    "subject_key",
    "predicate_key",
    "kind",
    "confidence",
    "status",
    "source",
    "source_ref",
    "supersedes",
    "created_at",
    "updated_at",
    "last_seen",
    "expires_at",
)
_REMINDER_COLUMNS = (
    "text",
    "due_at",
    "recurrence",
    "status",
    "snoozes",
    "source",
    "source_ref",
    "created_at",
    "updated_at",
    "done_at",
)


def utc(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).isoformat() if moment is not None else None


class MemoryTable(Table):
    # --- facts ---------------------------------------------------------------------------

    def insert_fact(self, fact: Fact, supersede: int | None = None) -> int:
        """Insert ``fact``; ``supersede``: the id of the fact it replaces, which becomes history."""
        with self._write() as conn:
            cursor = conn.execute(
                f"INSERT INTO facts ({', '.join(_FACT_COLUMNS)}) VALUES ({', '.join('?' * len(_FACT_COLUMNS))})",
                _fact_row(fact),
            )
            if supersede is not None:
                self._set_status(conn, [supersede], FactStatus.SUPERSEDED, fact.created_at)
        return int(cursor.lastrowid or 0)

    def update_fact(self, fact: Fact) -> None:
        assert fact.id is not None
        sets = ", ".join(f"{c} = ?" for c in _FACT_COLUMNS)
        with self._write() as conn:
            conn.execute(f"UPDATE facts SET {sets} WHERE id = ?", (*_fact_row(fact), fact.id))

    def set_fact_status(self, ids: Sequence[int], status: FactStatus, now: datetime) -> None:
        with self._write() as conn:
            self._set_status(conn, ids, status, now)

    @staticmethod
    def _set_status(conn: sqlite3.Connection, ids: Sequence[int], status: FactStatus, now: datetime) -> None:
        conn.executemany(
            "UPDATE facts SET status = ?, updated_at = ? WHERE id = ?",
            [(FactStatus(status).value, utc(now), fact_id) for fact_id in ids],
        )

    def get_fact(self, fact_id: int) -> Fact | None:
        row = self._conn().execute("SELECT * FROM facts WHERE id = ?", (fact_id,)).fetchone()
        return _fact(row) if row else None

    def facts_for_key(self, subject: str, predicate: str) -> list[Fact]:
        """Every fact of that (subject, predicate), any status, oldest first."""
        rows = self._conn().execute(
            "SELECT * FROM facts WHERE subject_key = ? AND predicate_key = ? ORDER BY id",
            (normalise(subject), normalise(predicate)),
        )
        return [_fact(row) for row in rows]

    def facts(self, statuses: Iterable[FactStatus] | None = None, limit: int = -1) -> list[Fact]:
        """Facts with one of ``statuses`` (all when None), newest first."""
        wanted = [FactStatus(s).value for s in statuses] if statuses is not None else []
        where = f"WHERE status IN ({', '.join('?' * len(wanted))})" if wanted else ""
        sql = f"SELECT * FROM facts {where} ORDER BY updated_at DESC, id DESC LIMIT ?"
        return [_fact(row) for row in self._conn().execute(sql, (*wanted, limit))]

    def confirmed_sentences(self) -> list[tuple[int, str]]:
        """(id, sentence) of every confirmed fact, newest first: what the memory's vectors need, read lightly."""
        rows = self._conn().execute(
            "SELECT id, subject, predicate, value FROM facts WHERE status = ? ORDER BY updated_at DESC, id DESC",
            (FactStatus.CONFIRMED.value,),
        )
        return [(row["id"], sentence(row["subject"], row["predicate"], row["value"])) for row in rows]

    def active_facts(self) -> list[Fact]:
        return self.facts(ACTIVE)

    def fact_history(self, fact_id: int) -> list[Fact]:
        """The fact, then the facts it superseded, newest first."""
        chain: list[Fact] = []
        current = self.get_fact(fact_id)
        while current is not None and len(chain) < 100:
            chain.append(current)
            current = self.get_fact(current.supersedes) if current.supersedes else None
        return chain

    def delete_fact(self, fact_id: int) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM facts WHERE id = ?", (fact_id,))

    # --- reminders -----------------------------------------------------------------------

    def insert_reminder(self, reminder: Reminder) -> int:
        cols = ", ".join(_REMINDER_COLUMNS)
        with self._write() as conn:
            cursor = conn.execute(
                f"INSERT INTO reminders ({cols}) VALUES ({', '.join('?' * len(_REMINDER_COLUMNS))})",
                _reminder_row(reminder),
            )
        return int(cursor.lastrowid or 0)

    def update_reminder(self, reminder: Reminder) -> None:
        assert reminder.id is not None
        sets = ", ".join(f"{c} = ?" for c in _REMINDER_COLUMNS)
        with self._write() as conn:
            conn.execute(f"UPDATE reminders SET {sets} WHERE id = ?", (*_reminder_row(reminder), reminder.id))

    def get_reminder(self, reminder_id: int) -> Reminder | None:
        row = self._conn().execute("SELECT * FROM reminders WHERE id = ?", (reminder_id,)).fetchone()
        return _reminder(row) if row else None

    def reminders(
        self, status: ReminderStatus | None = ReminderStatus.ACTIVE, due_before: datetime | None = None
    ) -> list[Reminder]:
        """Reminders by due time (soonest first); ``due_before``: only those due at or before it."""
        clauses, params = [], []
        if status is not None:
            clauses.append("status = ?")
            params.append(ReminderStatus(status).value)
        if due_before is not None:
            clauses.append("due_at <= ?")
            params.append(utc(due_before))
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._conn().execute(f"SELECT * FROM reminders {where} ORDER BY due_at, id", params)
        return [_reminder(row) for row in rows]

    # --- consolidation runs --------------------------------------------------------------

    def memory_tokens_since(self, since: datetime) -> int:
        """Tokens the consolidation runs started at or after ``since`` used (the daily budget)."""
        row = (
            self._conn()
            .execute(
                "SELECT COALESCE(SUM(s.value), 0) FROM run_stats s JOIN runs r ON r.id = s.run_id "
                "WHERE r.kind = ? AND r.started_at >= ? AND s.name IN ('prompt_tokens', 'completion_tokens')",
                (MEMORY_RUN, utc(since)),
            )
            .fetchone()
        )
        return int(row[0])

    def turns_since(self, since: datetime | None, limit: int) -> list[dict[str, object]]:
        """Chat turns (thread_id, question, answer, created_at) after ``since``, oldest first, at most ``limit``."""
        rows = self._conn().execute(
            "SELECT thread_id, question, answer, created_at FROM turns ORDER BY id DESC LIMIT ?", (max(limit, 0) * 4,)
        )  # created_at strings may carry any offset: compared as instants below
        turns = [{**dict(row), "created_at": datetime.fromisoformat(row["created_at"])} for row in rows]
        fresh = [t for t in turns if since is None or t["created_at"] > since]  # type: ignore[operator]
        return sorted(fresh, key=lambda t: t["created_at"])[:limit]  # type: ignore[arg-type,return-value]


def _fact_row(fact: Fact) -> tuple[object, ...]:
    return (
        fact.subject,
        fact.predicate,
        fact.value,
        normalise(fact.subject),
        normalise(fact.predicate),
        fact.kind.value,
        fact.confidence,
        fact.status.value,
        fact.source.value,
        fact.source_ref,
        fact.supersedes,
        utc(fact.created_at),
        utc(fact.updated_at),
        utc(fact.last_seen),
        utc(fact.expires_at),
    )


def _fact(row: sqlite3.Row) -> Fact:
    data = {k: row[k] for k in row.keys() if k not in ("subject_key", "predicate_key")}  # noqa: SIM118 (a Row iterates values)
    return Fact.model_validate(data)


def _reminder_row(reminder: Reminder) -> tuple[object, ...]:
    return (
        reminder.text,
        utc(reminder.due_at),
        reminder.recurrence,
        reminder.status.value,
        reminder.snoozes,
        reminder.source,
        reminder.source_ref,
        utc(reminder.created_at),
        utc(reminder.updated_at),
        utc(reminder.done_at),
    )


def _reminder(row: sqlite3.Row) -> Reminder:
    return Reminder.model_validate(dict(row))
