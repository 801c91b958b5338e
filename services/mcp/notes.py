"""Read-only note access for the MCP tools: the catalog (SQLite, safe from any process) and the vault
through ``services.vault``, which refuses any path leading out of it (``..``, absolute, symlinks)."""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from pathlib import PurePosixPath, PureWindowsPath
from typing import Literal

from services import vault
from services.attachments.cache import read_extraction
from services.catalog import Catalog
from services.catalog.graph_cache import served_graph
from services.catalog.models import EntityKind, NoteRecord, NoteStatus
from services.config import Settings
from services.indexing.attachments import attachment_note
from services.indexing.mentions import normalize_name
from services.mcp.schemas import (
    Change,
    EntityNotes,
    Link,
    ListedNote,
    Neighbor,
    Neighbors,
    NotePage,
    NoteRef,
    NoteView,
)
from services.vault.addresses import heading_slug, obsidian_uri, section
from services.vault.items import read_source
from services.vault.models import NoteType, ParsedNote

SortKey = Literal["path", "title", "modified", "created"]
ENTITY_NOTES = 20  # notes listed per entity


class NoteError(ValueError):
    """The note asked for cannot be given (outside the vault, missing, ambiguous): the message says why."""


class NoteReader:
    def __init__(self, settings: Settings, catalog: Catalog) -> None:
        self.settings = settings
        self.catalog = catalog
        self.graph = served_graph(catalog, settings.data_dir)

    def ref(self, path: str, record: NoteRecord | None = None) -> NoteRef:
        record = record or self.catalog.get_note(path)
        title = record.title if record is not None and record.title else PurePosixPath(path).stem
        return NoteRef(path=path, title=title, uri=obsidian_uri(self.settings.vault.name, path))

    # --- one note ---------------------------------------------------------------------------

    def resolve(self, name: str) -> str:
        """The vault path ``name`` designates: a path (``.md`` optional), else a title or an alias."""
        name = name.strip()
        if _leaves(name):
            raise NoteError(f"refused: {name!r} leads outside the vault (absolute path or '..')")
        if (record := self.catalog.get_note(name)) is not None and record.note_type == NoteType.ATTACHMENT:
            return name  # a document by its path: ``Docs/Manuel.pdf``
        for candidate in dict.fromkeys([name, f"{name}.md"]):
            if candidate.endswith(".md") and (
                self.catalog.get_note(candidate) is not None or os.path.lexists(self.settings.vault / candidate)
            ):
                return candidate
        key = name.removesuffix(".md").casefold()
        # Titles and file names first (a substring query); aliases need every note's row.
        matches = _named(self.catalog.list_notes(status=NoteStatus.INDEXED, query=key), key)
        matches = matches or _named(self.catalog.list_notes(status=NoteStatus.INDEXED), key)
        if len(matches) > 1:
            raise NoteError(f"{len(matches)} notes are called {name!r}: give one of their paths: {', '.join(matches)}")
        if not matches:
            raise NoteError(f"no note at or titled {name!r} (list_notes and search find notes)")
        return matches[0]

    def read(self, name: str, heading: str | None = None) -> NoteView:
        path = self.resolve(name)
        note = self._parse(path)
        body = note.body
        if heading:
            slugs = {heading_slug(h.text) for h in note.headings}
            if heading_slug(heading) not in slugs:
                shown = ", ".join(h.text for h in note.headings) or "none"
                raise NoteError(f"no heading {heading!r} in {path} (its headings: {shown})")
            body = section(note.body, heading)
        record = self.catalog.get_note(path)
        return NoteView(
            **self.ref(path, record).model_dump(),
            heading=heading or None,
            frontmatter=note.frontmatter,
            tags=note.tags,
            type=note.note_type.value,
            created=note.created,
            modified=note.modified,
            headings=[h.text for h in note.headings],
            body=body,
            links=self._links(path),
            backlinks=self._backlinks(path),
        )

    def body(self, name: str) -> tuple[str, str]:
        """``(path, body)`` of a note: what a resource read and the prompts give."""
        path = self.resolve(name)
        return path, self._parse(path).body

    def _parse(self, path: str) -> ParsedNote:
        if not vault.may_read(path, self.settings.exclude):  # excluded by the user: as if it were not there
            raise NoteError(f"no note at {path!r}")
        record = self.catalog.get_note(path)
        if record is not None and record.note_type == NoteType.ATTACHMENT:
            return self._document(path, record)
        # The note viewer's rules: an indexable Markdown path, read through services.vault.
        if not vault.is_indexable(path, self.settings.exclude):
            raise NoteError(f"refused: {path!r} is not a Markdown note of the vault")
        try:
            return read_source(self.settings, path)  # a vault note, or a connected source's mail or event
        except vault.PathOutsideVault:
            raise NoteError(f"refused: {path!r} leads outside the vault (a '..' or a symlink)") from None
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise NoteError(f"no note at {path!r}") from None
        except vault.NoteSkipped as exc:
            raise NoteError(f"{path!r} cannot be read: {exc}") from None

    def _document(self, path: str, record: NoteRecord) -> ParsedNote:
        """An indexed document as a note whose sections are its pages (``## Page 3``: ``heading="Page 3"``)."""
        extraction = read_extraction(self.settings.extraction_cache_path, record.content_hash or "")
        if extraction is None:
            raise NoteError(f"{path!r} has not been read yet (the extract worker reads documents in turn)")
        body = "\n\n".join(f"## Page {p.number}{' (OCR)' if p.ocr else ''}\n\n{p.text}" for p in extraction.pages)
        note = attachment_note(path, self.settings.vault / path, record.content_hash or "", extraction)
        return note.model_copy(update={"body": body, "headings": vault.extract_headings(body)})

    def _links(self, path: str) -> list[Link]:
        seen = {}
        for link in self.catalog.outlinks(path):
            seen.setdefault(
                (link.target, link.heading), Link(target=link.target, path=link.target_path, heading=link.heading)
            )
        return list(seen.values())

    def _backlinks(self, path: str) -> list[NoteRef]:
        return [self.ref(source) for source in dict.fromkeys(link.source for link in self.catalog.backlinks(path))]

    # --- many notes -------------------------------------------------------------------------

    def listing(
        self,
        folder: str | None = None,
        tag: str | None = None,
        note_type: NoteType | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        sort: SortKey = "path",
        limit: int = 50,
        cursor: str | None = None,
    ) -> NotePage:
        """Indexed notes matching every filter given, one page at a time (``cursor`` from the last page)."""
        offset = _offset(cursor)
        records = [
            r
            for r in self.catalog.list_notes(status=NoteStatus.INDEXED, folder=folder)
            if _has_tag(r, tag) and (note_type is None or r.note_type == note_type) and _dated(r.modified, since, until)
        ]
        records.sort(key=_sort_key(sort))
        page = records[offset : offset + limit]
        more = offset + limit < len(records)
        return NotePage(
            total=len(records), notes=[self._listed(r) for r in page], next_cursor=str(offset + limit) if more else None
        )

    def recent_changes(self, days: float, now: datetime, limit: int = 50) -> list[Change]:
        since = now - timedelta(days=days)
        records = [r for r in self.catalog.list_notes(status=NoteStatus.INDEXED) if _dated(r.modified, since, None)]
        records.sort(key=_sort_key("modified"))
        return [
            Change(
                **self.ref(r.path, r).model_dump(), folder=_folder(r.path), type=r.note_type.value, modified=r.modified
            )
            for r in records[:limit]
        ]

    def _listed(self, record: NoteRecord) -> ListedNote:
        return ListedNote(
            **self.ref(record.path, record).model_dump(),
            folder=_folder(record.path),
            tags=record.tags,
            type=record.note_type.value,
            created=record.created,
            modified=record.modified,
        )

    # --- graph and entities -----------------------------------------------------------------

    def neighbors(self, name: str, depth: int = 1) -> Neighbors:
        """Notes linked to ``name`` either way (wikilinks and synapses), then their own neighbours at depth 2."""
        path = self.resolve(name)
        graph = self.graph.get()
        if path not in graph:
            raise NoteError(f"{path!r} is not in the knowledge graph (not indexed yet, or a generated synapse note)")
        found: dict[str, Neighbor] = {}
        for other, kind in graph.neighbours(path).items():
            found[other] = Neighbor(**self.ref(other).model_dump(), depth=1, relation=kind)
        if depth >= 2:
            for near in list(found):
                for other, kind in graph.neighbours(near).items():
                    if other != path and other not in found:
                        found[other] = Neighbor(**self.ref(other).model_dump(), depth=2, relation=kind, via=near)
        ordered = sorted(found.values(), key=lambda n: (n.depth, n.title.casefold(), n.path))
        return Neighbors(note=self.ref(path), neighbors=ordered)

    def entities(self, name: str | None = None, kind: EntityKind | None = None, limit: int = 20) -> list[EntityNotes]:
        """Entities (people, organisations, places, works) whose name contains ``name``, with their notes."""
        key = normalize_name(name) if name else ""
        summaries = [s for s in self.catalog.top_entities(kind, limit=10_000) if key in s.normalized]
        return [
            EntityNotes(
                name=s.name,
                kind=s.kind.value,
                notes_count=s.notes,
                mentions=s.mentions,
                notes=[self.ref(p) for p in self.catalog.notes_with_entity(s.normalized, ENTITY_NOTES)],
            )
            for s in summaries[:limit]
        ]


def _named(records: list[NoteRecord], key: str) -> list[str]:
    names = lambda r: {r.title.casefold(), PurePosixPath(r.path).stem.casefold(), *(a.casefold() for a in r.aliases)}  # noqa: E731
    return [r.path for r in records if key in names(r)]


def _leaves(name: str) -> bool:
    """An absolute path or a ``..`` step: refused before anything is looked up."""
    return (
        PurePosixPath(name).is_absolute()
        or bool(PureWindowsPath(name).anchor)
        or ".." in name.replace("\\", "/").split("/")
    )


def _offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    if not cursor.isdigit():
        raise NoteError(f"invalid cursor {cursor!r}: pass the next_cursor of the previous page")
    return int(cursor)


def _has_tag(record: NoteRecord, tag: str | None) -> bool:
    """``tag`` or one of its subtags (``projet`` matches ``projet/atlas``), ``#`` and case ignored."""
    if not tag:
        return True
    wanted = tag.lstrip("#").casefold()
    return any(t.casefold() == wanted or t.casefold().startswith(wanted + "/") for t in record.tags)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.astimezone()


def _dated(value: datetime | None, since: datetime | None, until: datetime | None) -> bool:
    if since is None and until is None:
        return True
    if value is None:
        return False
    value = _aware(value)
    return (since is None or value >= _aware(since)) and (until is None or value < _aware(until))


def _sort_key(sort: SortKey):
    if sort in ("modified", "created"):  # newest first
        return lambda r: (-(_aware(getattr(r, sort)).timestamp() if getattr(r, sort) else 0.0), r.path)
    if sort == "title":
        return lambda r: ((r.title or r.path).casefold(), r.path)
    return lambda r: r.path


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""
