"""The cards table: each flashcard's review state (FSRS, as JSON) and due date, and each grade with the state
before it (so a grade can be undone). The cards themselves live in Markdown under ``obsirag/cards/``; a card
gone from its file is retired, never deleted, its history kept."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from services.catalog._base import Table


class CardRow(BaseModel):
    id: str
    file: str
    source: str
    heading: str
    question: str
    answer: str
    source_hash: str  # the source section's text when the card was first seen: a change flags the card
    state: str  # FSRS's card, as JSON
    due: datetime
    retired: bool = False


class CardsTable(Table):
    def upsert_card(self, row: CardRow) -> bool:
        """Insert a card, or refresh its text and file (its review state and hash kept); True when new."""
        with self._write() as conn:
            known = conn.execute("SELECT 1 FROM cards WHERE id = ?", (row.id,)).fetchone()
            if known:
                conn.execute(
                    "UPDATE cards SET file = ?, question = ?, answer = ?, heading = ?, retired = 0 WHERE id = ?",
                    (row.file, row.question, row.answer, row.heading, row.id),
                )
                return False
            conn.execute(
                "INSERT INTO cards (id, file, source, heading, question, answer, source_hash, state, due, retired)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
                (row.id, row.file, row.source, row.heading, row.question, row.answer, row.source_hash, row.state,
                 row.due.isoformat()),
            )  # fmt: skip
            return True

    def card_ids(self) -> set[str]:
        """Every card's id, retired ones included."""
        return {row[0] for row in self._conn().execute("SELECT id FROM cards").fetchall()}

    def retire_cards_except(self, kept: set[str]) -> int:
        """Retire every active card not in ``kept`` (gone from its file); how many."""
        with self._write() as conn:
            ids = [r[0] for r in conn.execute("SELECT id FROM cards WHERE retired = 0").fetchall() if r[0] not in kept]
            conn.executemany("UPDATE cards SET retired = 1 WHERE id = ?", [(i,) for i in ids])
        return len(ids)

    def cards(self, due_before: datetime | None = None, source: str | None = None) -> list[CardRow]:
        """Active cards, soonest due first; only those due by ``due_before`` / of ``source`` when given."""
        sql, params = "SELECT * FROM cards WHERE retired = 0", []
        if due_before is not None:
            sql += " AND due <= ?"
            params.append(due_before.isoformat())
        if source:
            sql += " AND source = ?"
            params.append(source)
        rows = self._conn().execute(sql + " ORDER BY due, id", params).fetchall()
        return [_row(r) for r in rows]

    def card(self, card_id: str) -> CardRow | None:
        row = self._conn().execute("SELECT * FROM cards WHERE id = ?", (card_id,)).fetchone()
        return _row(row) if row is not None else None

    def grade_card(self, card_id: str, rating: int, state: str, due: datetime, now: datetime) -> None:
        """The card's new state, and the grade with the state it replaces (``undo_last_grade``)."""
        with self._write() as conn:
            before = conn.execute("SELECT state, due FROM cards WHERE id = ?", (card_id,)).fetchone()
            conn.execute(
                "INSERT INTO card_reviews (card, rating, reviewed_at, before_state, before_due) VALUES (?, ?, ?, ?, ?)",
                (card_id, rating, now.isoformat(), before[0], before[1]),
            )
            conn.execute("UPDATE cards SET state = ?, due = ? WHERE id = ?", (state, due.isoformat(), card_id))

    def undo_last_grade(self) -> str | None:
        """The last grade undone (the card back to its state before it); the card's id, None when none."""
        with self._write() as conn:
            last = conn.execute("SELECT * FROM card_reviews ORDER BY id DESC LIMIT 1").fetchone()
            if last is None:
                return None
            conn.execute(
                "UPDATE cards SET state = ?, due = ? WHERE id = ?",
                (last["before_state"], last["before_due"], last["card"]),
            )
            conn.execute("DELETE FROM card_reviews WHERE id = ?", (last["id"],))
            return str(last["card"])


def _row(row: object) -> CardRow:
    data = dict(row)  # type: ignore[call-overload]
    data["due"] = datetime.fromisoformat(data["due"])
    data["retired"] = bool(data["retired"])
    return CardRow.model_validate(data)
