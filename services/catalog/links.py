"""The links table: every wikilink/embed of every note, as written, and the file it resolves to."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence

from services.catalog._base import Table
from services.catalog.models import ResolvedLink
from services.vault.links import LinkResolver
from services.vault.syntax import WikiLink

_SELECT = "SELECT source, position, target, heading, block, alias, embed, target_path FROM links"
_INSERT = (
    "INSERT INTO links (source, position, target, heading, block, alias, embed, target_path) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


class LinksTable(Table):
    """Links: written by the indexer per note, resolved for the whole vault by ``resolve_links``."""

    def replace_links(self, source: str, links: Sequence[WikiLink]) -> None:
        """Store ``source``'s links in order (``position`` = index in ``links``).

        A target ``source`` already linked to keeps its resolution and ``[[#heading]]`` resolves
        to ``source``; any other new target stays dangling until the next ``resolve_links``.
        Raises ``KeyError`` when ``source`` has no note row (upsert the note first).
        """
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM notes WHERE path = ?", (source,)).fetchone() is None:
                raise KeyError(source)
            rows = conn.execute("SELECT target, target_path FROM links WHERE source = ?", (source,))
            known = {target: target_path for target, target_path in rows}
            conn.execute("DELETE FROM links WHERE source = ?", (source,))
            conn.executemany(_INSERT, [_link_row(source, i, link, known) for i, link in enumerate(links)])

    def resolve_links(self, attachments: Iterable[str] = ()) -> int:
        """Recompute every link's ``target_path`` (see ``services.vault.links``) in one transaction.

        Call it after a batch of upserts, deletes or alias changes. ``attachments`` are the
        vault's non-note files: an embed of a file not listed here is dangling.
        Returns the number of resolved links.
        """
        with self._write() as conn:
            resolver = _resolver(conn, attachments)
            rows = conn.execute("SELECT rowid, source, target, target_path FROM links").fetchall()
            changes: list[tuple[str | None, int]] = []
            resolved = 0
            for rowid, source, target, old in rows:
                new = resolver.resolve(target, source)
                resolved += new is not None
                if new != old:
                    changes.append((new, rowid))
            conn.executemany("UPDATE links SET target_path = ? WHERE rowid = ?", changes)
        return resolved

    def outlinks(self, path: str) -> list[ResolvedLink]:
        """``path``'s links in the order they are written."""
        return self._links(f"{_SELECT} WHERE source = ? ORDER BY position", (path,))

    def backlinks(self, path: str) -> list[ResolvedLink]:
        """Links of other notes that resolve to ``path``, by source then position."""
        sql = f"{_SELECT} WHERE target_path = ? AND source != ? ORDER BY source, position"
        return self._links(sql, (path, path))

    def unresolved_links(self) -> list[ResolvedLink]:
        """Dangling links (no note, alias or known attachment matches), by source then position."""
        return self._links(f"{_SELECT} WHERE target_path IS NULL ORDER BY source, position", ())

    def linked(self, a: str, b: str) -> bool:
        """Whether a resolved link joins ``a`` and ``b``, in either direction."""
        sql = "SELECT 1 FROM links WHERE (source = ? AND target_path = ?) OR (source = ? AND target_path = ?)"
        return self._conn().execute(sql + " LIMIT 1", (a, b, b, a)).fetchone() is not None

    def link_edges(self, include_attachments: bool = False) -> list[tuple[str, str]]:
        """Distinct resolved (source, target) pairs between notes, without self-loops, sorted."""
        sql = "SELECT DISTINCT source, target_path FROM links WHERE target_path IS NOT NULL AND target_path != source"
        if not include_attachments:
            sql += " AND target_path IN (SELECT path FROM notes)"
        return [(source, target) for source, target in self._conn().execute(sql + " ORDER BY 1, 2")]

    def _links(self, sql: str, params: tuple[str, ...]) -> list[ResolvedLink]:
        return [_resolved_link(row) for row in self._conn().execute(sql, params)]


def _link_row(source: str, position: int, link: WikiLink, known: dict[str, str | None]) -> tuple[object, ...]:
    target_path = source if not link.target.strip() else known.get(link.target)
    return (source, position, link.target, link.heading, link.block, link.alias, int(link.embed), target_path)


def _resolver(conn: sqlite3.Connection, attachments: Iterable[str]) -> LinkResolver:
    paths: list[str] = []
    documents: list[str] = []  # indexed attachments (PDFs, Office files, images): ``[[doc.pdf]]`` finds them
    aliases: dict[str, list[str]] = {}
    for path, raw in conn.execute("SELECT path, aliases FROM notes"):
        (paths if path.lower().endswith(".md") else documents).append(path)
        if raw != "[]":
            aliases[path] = json.loads(raw)
    return LinkResolver(paths, aliases, [*attachments, *documents])


def _resolved_link(row: sqlite3.Row) -> ResolvedLink:
    return ResolvedLink.model_validate(dict(zip(row.keys(), row, strict=True)))
