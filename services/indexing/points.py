"""What the store holds for one note (a point per chunk, with its vectors and its payload), and the catalog's record
of it once indexed."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from services.catalog.models import NoteRecord, NoteStatus
from services.indexing.chunking import Chunk
from services.retrieval import lexical
from services.retrieval.models import StorePoint
from services.retrieval.store import point_id
from services.vault.models import ParsedNote


def note_points(
    note: ParsedNote,
    chunks: list[Chunk],
    vectors: list[list[float]],
    title_vector: list[float],
    entities: list[str],
    page_payload: dict[int, dict[str, object]] | None = None,
) -> list[StorePoint]:
    """One point per chunk: its dense vector, its sparse (lexical) vector, its payload and the title's vector.

    ``page_payload``: fields added to the chunks of a document's page (an OCR page's ``ocr``, confidence).
    """
    extra = page_payload or {}
    return [
        StorePoint(
            id=point_id(note.path, chunk.index),
            dense=vector,
            sparse=lexical.encode_document(chunk.text, note.title, note.aliases, chunk.heading_path),
            payload=chunk_payload(note, chunk, entities) | extra.get(chunk.page or 0, {}),
            title=title_vector,
        )
        for chunk, vector in zip(chunks, vectors, strict=True)
    ]


def chunk_payload(note: ParsedNote, chunk: Chunk, entities: list[str] | None = None) -> dict[str, object]:
    """The payload stored with each chunk (see docs/architecture.md for the field table).

    ``entities``: the note's normalised entity names (and variants) known to the catalog.
    """
    return {
        "path": note.path,
        "title": note.title,
        "aliases": note.aliases,
        "tags": expand_tags(note.tags),
        "folder": ancestor_folders(note.path),
        "type": note.note_type.value,
        "created_ts": note.created.timestamp(),
        "modified_ts": note.modified.timestamp(),
        "heading_path": chunk.heading_path,
        "chunk_index": chunk.index,
        "content_hash": note.content_hash,
        "text": chunk.text,
        "entities": entities or [],
        **({"page": chunk.page} if chunk.page is not None else {}),
    }


def expand_tags(tags: Iterable[str]) -> list[str]:
    """Lowercase tags with every nested tag's ancestors: ``projet/atlas`` → ``projet/atlas``, ``projet``."""
    expanded: dict[str, None] = {}
    for tag in tags:
        parts = tag.lower().lstrip("#").strip("/").split("/")
        for depth in range(len(parts), 0, -1):
            expanded["/".join(parts[:depth])] = None
    return list(expanded)


def ancestor_folders(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def indexed_record(note: ParsedNote, message: str | None, chunk_count: int) -> NoteRecord:
    """The catalog's row of a note just stored (``message``: a document's warning, a frontmatter error)."""
    return NoteRecord(
        path=note.path,
        content_hash=note.content_hash,
        mtime=note.mtime,
        size=note.size,
        title=note.title,
        aliases=note.aliases,
        tags=note.tags,
        note_type=note.note_type,
        created=note.created,
        modified=note.modified,
        status=NoteStatus.INDEXED,
        message=message,
        chunk_count=chunk_count,
        indexed_at=datetime.now(UTC),
    )
