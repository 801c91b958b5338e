"""The conversations tables: chat threads and their turns (question, answer, sources, timings)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

from services.catalog._base import Table
from services.catalog.models import Source, Thread, Turn


class ConversationsTable(Table):
    def create_thread(self, title: str, now: datetime | None = None) -> str:
        thread_id = uuid.uuid4().hex[:12]
        stamp = (now or datetime.now(UTC)).isoformat()
        with self._write() as conn:
            conn.execute(
                "INSERT INTO threads (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                (thread_id, title.strip()[:120] or "Conversation", stamp, stamp),
            )
        return thread_id

    def add_turn(self, turn: Turn) -> int:
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO turns (thread_id, question, retrieval_query, answer, sources, provenance, main_note,"
                " model, backend, timings, created_at, prompt, web, error, finish_reason, memory, kind,"
                " grounding, research) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    turn.thread_id,
                    turn.question,
                    turn.retrieval_query,
                    turn.answer,
                    json.dumps([s.model_dump() for s in turn.sources], ensure_ascii=False),
                    turn.provenance.value,
                    turn.main_note,
                    turn.model,
                    turn.backend,
                    json.dumps(turn.timings),
                    turn.created_at.isoformat(),
                    turn.prompt,
                    turn.web,
                    turn.error,
                    turn.finish_reason,
                    json.dumps([m.model_dump() for m in turn.memory], ensure_ascii=False),
                    turn.kind.value if turn.kind else "",
                    json.dumps(turn.grounding, ensure_ascii=False) if turn.grounding else "",
                    _research_json(turn),
                ),
            )
            stamp = turn.created_at.isoformat()
            conn.execute("UPDATE threads SET updated_at = ? WHERE id = ?", (stamp, turn.thread_id))
        return int(cursor.lastrowid or 0)

    def get_thread(self, thread_id: str) -> Thread | None:
        with self._snapshot() as conn:
            row = conn.execute("SELECT * FROM threads WHERE id = ?", (thread_id,)).fetchone()
            if row is None:
                return None
            turns = conn.execute("SELECT * FROM turns WHERE thread_id = ? ORDER BY id", (thread_id,)).fetchall()
        return _thread(row, [_turn(t) for t in turns])

    def get_turn(self, turn_id: int) -> Turn | None:
        row = self._conn().execute("SELECT * FROM turns WHERE id = ?", (turn_id,)).fetchone()
        return _turn(row) if row is not None else None

    def list_threads(self, query: str | None = None, limit: int = 100) -> list[Thread]:
        """Newest first; ``query`` matches the title or any question/answer, case-insensitively."""
        sql = "SELECT * FROM threads"
        params: list[object] = []
        if query:
            sql += " WHERE title LIKE ? OR id IN (SELECT thread_id FROM turns WHERE question LIKE ? OR answer LIKE ?)"
            params += [f"%{query}%"] * 3
        rows = self._conn().execute(sql + " ORDER BY updated_at DESC LIMIT ?", [*params, limit]).fetchall()
        return [_thread(row, []) for row in rows]

    def recent_turns(self, limit: int = 10) -> list[Turn]:
        """The last questions asked, newest first (the dashboard's outcomes)."""
        rows = self._conn().execute("SELECT * FROM turns ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [_turn(row) for row in rows]

    def rename_thread(self, thread_id: str, title: str) -> None:
        with self._write() as conn:
            conn.execute("UPDATE threads SET title = ? WHERE id = ?", (title.strip()[:120], thread_id))

    def delete_thread(self, thread_id: str) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM threads WHERE id = ?", (thread_id,))


def _thread(row: object, turns: list[Turn]) -> Thread:
    return Thread(
        id=row["id"],  # type: ignore[index]
        title=row["title"],  # type: ignore[index]
        created_at=datetime.fromisoformat(row["created_at"]),  # type: ignore[index]
        updated_at=datetime.fromisoformat(row["updated_at"]),  # type: ignore[index]
        turns=turns,
    )


def _turn(row: object) -> Turn:
    data = dict(row)  # type: ignore[call-overload]
    data["sources"] = [Source.model_validate(s) for s in json.loads(data["sources"])]
    data["timings"] = json.loads(data["timings"])
    data["memory"] = json.loads(data.get("memory") or "[]")
    data["kind"] = data.get("kind") or None
    data["grounding"] = json.loads(data["grounding"]) if data.get("grounding") else None
    data["research"] = json.loads(data["research"]) if data.get("research") else None
    data["created_at"] = datetime.fromisoformat(data["created_at"])
    return Turn.model_validate(data)


def _research_json(turn: Turn) -> str:
    if turn.research is None:
        return ""
    return json.dumps([sub.model_dump(mode="json") for sub in turn.research], ensure_ascii=False)
