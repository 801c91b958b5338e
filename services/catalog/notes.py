"""The notes table: one row per vault Markdown file, whatever its status."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter, defaultdict
from datetime import datetime

from services.catalog._base import Table, fold
from services.catalog.models import FolderCoverage, NoteRecord, NoteStatus
from services.vault.links import folder_of
from services.vault.models import NoteType

_COLUMNS = (
    "path",
    "folder",
    "content_hash",
    "mtime",
    "size",
    "title",
    "aliases",
    "tags",
    "note_type",
    "created",
    "modified",
    "status",
    "message",
    "chunk_count",
    "indexed_at",
)
# ON CONFLICT DO UPDATE, never INSERT OR REPLACE: a replace deletes the row and cascades to its links.
_UPSERT = (
    f"INSERT INTO notes ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))}) "
    f"ON CONFLICT (path) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in _COLUMNS[1:])}"
)
_STATUSES = {status.value: status for status in NoteStatus}


class NotesTable(Table):
    """Notes: what the indexer knows of each file (hash, stat, metadata, status)."""

    def upsert_note(self, record: NoteRecord) -> None:
        """Insert or update the row of ``record.path``; its links are kept."""
        with self._write() as conn:
            conn.execute(_UPSERT, _note_row(record))

    def get_note(self, path: str) -> NoteRecord | None:
        row = self._conn().execute("SELECT * FROM notes WHERE path = ?", (path,)).fetchone()
        return _note_record(row) if row else None

    def note_states(self, under: str = "") -> dict[str, tuple[str, float, int, NoteStatus]]:
        """path → (content_hash, mtime, size, status) for every row (``under``: of the notes in that folder, at
        any depth): what a reconcile compares."""
        sql = "SELECT path, content_hash, mtime, size, status FROM notes"
        if under:  # the primary key's range: "/" sorts just before "0", so [folder/, folder0) is the folder
            rows = self._conn().execute(f"{sql} WHERE path >= ? AND path < ?", (f"{under}/", f"{under}0"))
        else:
            rows = self._conn().execute(sql)
        return {path: (digest, mtime, size, _STATUSES[status]) for path, digest, mtime, size, status in rows}

    def indexed_note_mtimes(self) -> list[tuple[str, float]]:
        """(path, mtime) of every indexed note with chunks, by path: what the learner chooses from (reading the
        whole rows for it took 1 s a cycle at 20,000 notes)."""
        sql = "SELECT path, mtime FROM notes WHERE status = ? AND note_type = ? AND chunk_count > 0 ORDER BY path"
        rows = self._conn().execute(sql, (NoteStatus.INDEXED.value, NoteType.NOTE.value))
        return [(path, mtime) for path, mtime in rows]

    def node_rows(self) -> list[tuple[str, str, str, list[str], str, str | None, str | None, float]]:
        """(path, folder, title, tags, note_type, created, modified, mtime) of every row, by path: the graph's
        nodes (whole records took 0.4 s of its 1.8 s build at 20,000 notes)."""
        sql = "SELECT path, folder, title, tags, note_type, created, modified, mtime FROM notes ORDER BY path"
        rows = self._conn().execute(sql)
        return [
            (p, folder, title, json.loads(tags), kind, c, m, mtime)
            for p, folder, title, tags, kind, c, m, mtime in rows
        ]

    def list_notes(
        self,
        status: NoteStatus | None = None,
        folder: str | None = None,
        query: str | None = None,
        limit: int | None = None,
    ) -> list[NoteRecord]:
        """Rows ordered by path. ``folder`` includes its subfolders; ``query`` is a case- and accent-blind
        substring of the path or the title."""
        clauses: list[str] = []
        params: list[object] = []
        if status is not None:
            clauses.append("status = ?")
            params.append(NoteStatus(status).value)
        if folder is not None and folder.strip("/"):
            prefix = folder.strip("/")
            clauses.append("(folder = ? OR substr(folder, 1, ?) = ?)")
            params += [prefix, len(prefix) + 1, prefix + "/"]
        if query:
            clauses.append("(instr(fold(path), ?) > 0 OR instr(fold(title), ?) > 0)")
            params += [fold(query), fold(query)]
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        sql = f"SELECT * FROM notes {where} ORDER BY path LIMIT ?"
        rows = self._conn().execute(sql, [*params, -1 if limit is None else limit])
        return [_note_record(row) for row in rows]

    def title_rows(self) -> list[tuple[str, str | None, NoteStatus]]:
        """(path, title, status) of every row: for a list that shows no more (the note picker; 55,000 whole
        records took 1.3 s to read)."""
        cursor = self._conn().cursor()
        cursor.row_factory = None  # plain tuples: a ``sqlite3.Row`` each was a fifth of the read
        rows = cursor.execute("SELECT path, title, status FROM notes")
        return [(path, title, _STATUSES[status]) for path, title, status in rows]

    def troubled_notes(self, limit: int | None = None) -> list[NoteRecord]:
        """Skipped and failed notes, and indexed ones with a warning (invalid YAML): failures first."""
        sql = (
            "SELECT * FROM notes WHERE status != 'indexed' OR coalesce(message, '') != '' "
            "ORDER BY status = 'indexed', status = 'skipped', path LIMIT ?"
        )

        def read() -> list[NoteRecord]:
            return [_note_record(row) for row in self._conn().execute(sql, (-1 if limit is None else limit,))]

        return list(self._while_unchanged(("troubled", limit), read))

    def delete_note(self, path: str) -> None:
        """Forget a note and its outgoing links; links pointing at it become dangling."""
        with self._write() as conn:
            conn.execute("UPDATE links SET target_path = NULL WHERE target_path = ?", (path,))
            conn.execute("DELETE FROM notes WHERE path = ?", (path,))

    def move_note(self, old: str, new: str) -> None:
        """Rename a row (a row already at ``new`` is replaced); links follow it. Raises ``KeyError``."""
        if old == new:
            return
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM notes WHERE path = ?", (old,)).fetchone() is None:
                raise KeyError(old)
            conn.execute("UPDATE links SET target_path = NULL WHERE target_path = ?", (new,))
            conn.execute("DELETE FROM notes WHERE path = ?", (new,))
            conn.execute("UPDATE notes SET path = ?, folder = ? WHERE path = ?", (new, folder_of(new), old))
            conn.execute("UPDATE links SET target_path = ? WHERE target_path = ?", (new, old))

    def mark_status(self, path: str, status: NoteStatus, message: str | None) -> None:
        """Set a note's status and message, creating a minimal row if the note was never indexed."""
        title = path.rsplit("/", 1)[-1].removesuffix(".md")
        with self._write() as conn:
            conn.execute(
                "INSERT INTO notes (path, folder, title, status, message) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (path) DO UPDATE SET status = excluded.status, message = excluded.message",
                (path, folder_of(path), title, NoteStatus(status).value, message),
            )

    def written_since(self, since: datetime) -> int:
        """Notes (and documents) the indexer wrote a row for at or after ``since``: indexed, skipped or failed."""
        row = self._conn().execute("SELECT COUNT(*) FROM notes WHERE indexed_at >= ?", (since.isoformat(),)).fetchone()
        return int(row[0])

    def status_counts(self) -> dict[NoteStatus, int]:
        """Notes per status; every status is present, zero included."""

        def count() -> dict[NoteStatus, int]:
            counts = dict.fromkeys(NoteStatus, 0)
            for status, n in self._conn().execute("SELECT status, COUNT(*) FROM notes GROUP BY status"):
                counts[_STATUSES[status]] = n
            return counts

        return dict(self._while_unchanged(("statuses",), count))

    def folder_coverage(self, depth: int | None = None) -> list[FolderCoverage]:
        """Status counts per folder, ordered by folder (``""`` is the vault root).

        ``depth=None`` counts each folder's own notes; ``depth=n`` rolls subfolders up into their
        ancestor ``n`` levels deep (``depth=1``: one line per top-level folder).
        """

        def count() -> list[FolderCoverage]:
            totals: dict[str, Counter[str]] = defaultdict(Counter)
            rows = self._conn().execute("SELECT folder, status, COUNT(*) FROM notes GROUP BY folder, status")
            for folder, status, n in rows:
                key = folder if depth is None else "/".join(folder.split("/")[:depth])
                totals[key][status] += n
            return [FolderCoverage(folder=folder, **counts) for folder, counts in sorted(totals.items())]

        return list(self._while_unchanged(("coverage", depth), count))

    def fingerprint(self) -> tuple[object, ...]:
        """Changes whenever a note row is added, changed or removed, or a link is added, removed or re-resolved
        (the ``changes`` counters, moved by triggers: read on each page view)."""
        return tuple(self._conn().execute("SELECT notes, links FROM changes").fetchone())

    def note_count(self) -> int:
        return int(self._conn().execute("SELECT COUNT(*) FROM notes").fetchone()[0])


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _note_row(record: NoteRecord) -> tuple[object, ...]:
    return (
        record.path,
        record.folder,
        record.content_hash,
        record.mtime,
        record.size,
        record.title,
        json.dumps(record.aliases, ensure_ascii=False),
        json.dumps(record.tags, ensure_ascii=False),
        record.note_type.value,
        _iso(record.created),
        _iso(record.modified),
        record.status.value,
        record.message,
        record.chunk_count,
        _iso(record.indexed_at),
    )


def _note_record(row: sqlite3.Row) -> NoteRecord:
    data = {key: row[key] for key in row.keys() if key != "folder"}  # noqa: SIM118 (Row is no dict)
    data["aliases"] = json.loads(data["aliases"])
    data["tags"] = json.loads(data["tags"])
    return NoteRecord.model_validate(data)
