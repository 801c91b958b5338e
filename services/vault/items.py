"""Items read from connected sources (mail, calendar events): notes that live in the data folder, never in
the vault, under paths no vault file can have.

An item's path is ``<kind>:<source>/<…>.md`` (``mail:perso/INBOX/412.md``, ``event:agenda/<uid>.md``):
Obsidian refuses ``:`` in file names, so such a path never names a vault note, and everything that keys
on paths (catalog, store, citations, viewer links) takes items as they are. Each item is a Markdown file
with frontmatter under ``<data>/connectors/items/<kind>/``, written by ``services.connectors`` only.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator
from pathlib import Path

from services.config import Settings
from services.vault.models import NoteType, ParsedNote
from services.vault.notes import NoteSkipped, read_note
from services.vault.paths import NOTE_SUFFIX, PathOutsideVault, resolve_in_vault

ITEM_TYPES = {"mail": NoteType.MAIL, "event": NoteType.EVENT}
ITEMS_FOLDER = "items"


def is_item(path: str) -> bool:
    """Whether ``path`` names a connected source's item rather than a vault file."""
    kind, colon, _ = path.partition(":")
    return bool(colon) and kind in ITEM_TYPES and "/" not in kind


def item_path(kind: str, rest: str) -> str:
    """The path of an item of ``kind`` (``mail``, ``event``) stored at ``rest`` (``<source>/…``, no suffix)."""
    return f"{kind}:{rest}{NOTE_SUFFIX}"


def item_file(connectors_dir: Path, path: str) -> Path:
    """The file holding item ``path``; ``PathOutsideVault`` for a path that is no item or leads out."""
    if not is_item(path):
        raise PathOutsideVault(f"not an item path: {path!r}")
    kind, _, rest = path.partition(":")
    return resolve_in_vault(connectors_dir / ITEMS_FOLDER / kind, rest)


def read_item(connectors_dir: Path, path: str, max_bytes: int) -> ParsedNote:
    """Parse one item as a note (its path and type the item's); raises as ``read_note`` does."""
    kind, _, rest = path.partition(":")
    if not is_item(path):
        raise PathOutsideVault(f"not an item path: {path!r}")
    note = read_note(connectors_dir / ITEMS_FOLDER / kind, rest, max_bytes)
    return note.model_copy(update={"path": f"{kind}:{note.path}", "note_type": ITEM_TYPES[kind]})


def iter_item_paths(connectors_dir: Path, prefix: str = "") -> Iterator[tuple[str, Path]]:
    """Every item stored (its path and file), optionally only those whose path starts with ``prefix``."""
    root = connectors_dir / ITEMS_FOLDER
    for kind in ITEM_TYPES:
        base = root / kind
        for dirpath, _dirnames, filenames in os.walk(base):
            folder = Path(dirpath).relative_to(base).as_posix().removeprefix(".").lstrip("/")
            for name in sorted(filenames):
                if name.endswith(NOTE_SUFFIX) and not name.startswith("."):
                    path = f"{kind}:{posixpath.join(folder, name)}"
                    if path.startswith(prefix):
                        yield path, Path(dirpath) / name


def read_source(settings: Settings, path: str) -> ParsedNote:
    """A vault note or a connected source's item, by its path: what readers of indexed notes call."""
    if is_item(path):
        return read_item(settings.connectors_dir, path, settings.max_file_bytes)
    return read_note(settings.vault, path, settings.max_file_bytes)


def read_source_if_readable(settings: Settings, path: str) -> ParsedNote | None:
    """``read_source``, or None when it is gone, unreadable or skipped (``read_note_if_readable``'s rule)."""
    try:
        return read_source(settings, path)
    except (OSError, NoteSkipped, PathOutsideVault):
        return None
