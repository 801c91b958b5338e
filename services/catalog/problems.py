"""What went wrong with a note, and what the user can do about it: one list for the dashboard and the CLI.

A note's catalog ``message`` is the reason (``skipped`` and ``error`` notes, and ``indexed`` ones with a
warning such as invalid YAML); ``fix_for`` turns it into the next step, in French (the web UI) or English.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from services.catalog.models import NoteRecord, NoteStatus

OUTSIDE_VAULT = "symlink pointing outside the vault: not read (ObsiRAG reads only the vault)"
Lang = Literal["fr", "en"]

# (how the reason starts, the fix in French, the fix in English); the first match wins.
_FIXES: tuple[tuple[str, str, str], ...] = (
    (
        "invalid yaml frontmatter",
        "corrigez le YAML entre les lignes --- en tête de la note (elle est indexée sans ses propriétés)",
        "fix the YAML between the --- lines at the top of the note (it is indexed without its properties)",
    ),
    (
        "symlink pointing outside",
        "copiez la note dans le coffre, ou supprimez le lien symbolique",
        "copy the note into the vault, or remove the symlink",
    ),
    (
        "oversized",
        "scindez la note, ou relevez OBSIRAG_MAX_FILE_MB",
        "split the note, or raise OBSIRAG_MAX_FILE_MB",
    ),
    (
        "binary content",
        "ce n'est pas du texte : renommez-le sans .md, ou excluez-le (OBSIRAG_EXCLUDE)",
        "this is not text: rename it without .md, or exclude it (OBSIRAG_EXCLUDE)",
    ),
    (
        "not a regular file",
        "remplacez-le par un fichier ordinaire, ou excluez-le (OBSIRAG_EXCLUDE)",
        "replace it with a plain file, or exclude it (OBSIRAG_EXCLUDE)",
    ),
)
_RETRY = (
    "voyez le journal de l'indexeur, puis « Réindexer le coffre »",
    "see the indexer's log, then `obsirag reindex`",
)


class NoteProblem(BaseModel):
    path: str
    status: NoteStatus
    reason: str
    fix: str


def fix_for(message: str, lang: Lang = "fr") -> str:
    """The next step for a note recorded with ``message``."""
    lowered = message.lower()
    for start, fr, en in _FIXES:
        if lowered.startswith(start):
            return fr if lang == "fr" else en
    return _RETRY[0] if lang == "fr" else _RETRY[1]


def note_problems(records: list[NoteRecord], lang: Lang = "fr") -> list[NoteProblem]:
    """Each record that is not simply indexed: skipped, failed, or indexed with a warning."""
    return [
        NoteProblem(path=r.path, status=r.status, reason=r.message or "", fix=fix_for(r.message or "", lang))
        for r in records
        if r.status != NoteStatus.INDEXED or r.message
    ]
