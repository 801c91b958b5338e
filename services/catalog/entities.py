"""The entities tables: the named entities of each note (written by the NER worker) and when NER last ran."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime

from services.catalog._base import Table
from services.catalog.models import EntityKind, EntitySummary, NoteEntity


class EntitiesTable(Table):
    """Entities: one row per (note, normalised name); they die with their note and follow it on rename."""

    def replace_entities(
        self, path: str, entities: Sequence[NoteEntity], content_hash: str, language: str, model: str, now: datetime
    ) -> bool:
        """Store ``path``'s entities and the NER state; False (nothing written) when the note has no row."""
        rows = [
            (path, e.normalized, e.kind.value, e.name, e.count, json.dumps(e.variants, ensure_ascii=False))
            for e in entities
        ]
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM notes WHERE path = ?", (path,)).fetchone() is None:
                return False
            conn.execute("DELETE FROM note_entities WHERE path = ?", (path,))
            conn.executemany(
                "INSERT INTO note_entities (path, normalized, kind, name, count, variants) VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
            conn.execute(
                "INSERT INTO entity_runs (path, content_hash, language, model, processed_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (path) DO UPDATE SET content_hash = excluded.content_hash, "
                "language = excluded.language, model = excluded.model, processed_at = excluded.processed_at",
                (path, content_hash, language, model, now.isoformat()),
            )
        return True

    def note_entities(self, path: str) -> list[NoteEntity]:
        """``path``'s entities, most mentioned first."""
        rows = self._conn().execute(
            "SELECT * FROM note_entities WHERE path = ? ORDER BY count DESC, normalized", (path,)
        )
        return [_entity(row) for row in rows]

    def entity_state(self, path: str) -> tuple[str, str] | None:
        """(content hash, model) of the note's last NER run, or None when it never ran."""
        row = self._conn().execute("SELECT content_hash, model FROM entity_runs WHERE path = ?", (path,)).fetchone()
        return (row[0], row[1]) if row else None

    def notes_without_entities(self, model: str) -> list[str]:
        """Indexed user notes whose entities are missing or stale (other content or model), by path."""
        rows = self._conn().execute(
            "SELECT n.path FROM notes n LEFT JOIN entity_runs r ON r.path = n.path "
            "WHERE n.status = 'indexed' AND n.note_type = 'note' "
            "AND (r.path IS NULL OR r.content_hash != n.content_hash OR r.model != ?) ORDER BY n.path",
            (model,),
        )
        return [row[0] for row in rows]

    def notes_with_entity(self, normalized: str, limit: int = -1) -> list[str]:
        """Paths of the notes that mention the entity, most mentions first."""
        rows = self._conn().execute(
            "SELECT path FROM note_entities WHERE normalized = ? ORDER BY count DESC, path LIMIT ?",
            (normalized, limit),
        )
        return [row[0] for row in rows]

    def top_entities(self, kind: EntityKind | None = None, limit: int = 50) -> list[EntitySummary]:
        """Entities across the vault, in the most notes first."""
        where = "WHERE kind = ?" if kind is not None else ""
        params: list[object] = [EntityKind(kind).value] if kind is not None else []
        rows = self._conn().execute(
            "SELECT normalized, MAX(name) AS name, MAX(kind) AS kind, COUNT(*) AS notes, SUM(count) AS mentions "
            f"FROM note_entities {where} GROUP BY normalized ORDER BY notes DESC, mentions DESC, normalized LIMIT ?",
            [*params, limit],
        )
        return [EntitySummary.model_validate(dict(row)) for row in rows]


def _entity(row: sqlite3.Row) -> NoteEntity:
    return NoteEntity(
        name=row["name"],
        normalized=row["normalized"],
        kind=EntityKind(row["kind"]),
        count=row["count"],
        variants=json.loads(row["variants"]),
    )
