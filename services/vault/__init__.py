"""The vault: the user's files, read and never written, and ObsiRAG's own files under ``obsirag/``.

Owns the Obsidian syntax (``reader``, ``syntax``, ``links``), what one file holds (``models``, ``notes``),
which files exist (``paths``), the note page's HTML (``rendering``) and the only writes
(``artifacts``: always inside ``<vault>/obsirag/``). Uses ``services.language`` and ``services.config``
alone. ``from services import vault`` gives the reading API below.
"""

from services.vault.notes import (
    NoteSkipped,
    decode_note,
    extract_headings,
    extract_links,
    extract_tags,
    read_note,
    read_note_if_readable,
    split_frontmatter,
)
from services.vault.paths import (
    NOTE_SUFFIX,
    PathOutsideVault,
    file_hash,
    is_indexable,
    iter_vault_paths,
    may_read,
    resolve_in_vault,
    walk_vault,
)

__all__ = [
    "NOTE_SUFFIX",
    "NoteSkipped",
    "PathOutsideVault",
    "decode_note",
    "extract_headings",
    "extract_links",
    "extract_tags",
    "file_hash",
    "is_indexable",
    "iter_vault_paths",
    "may_read",
    "read_note",
    "read_note_if_readable",
    "resolve_in_vault",
    "split_frontmatter",
    "walk_vault",
]
