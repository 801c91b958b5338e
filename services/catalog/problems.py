"""What went wrong with a note, and what the user can do about it: one list for the dashboard and the CLI.

A note's catalog ``message`` is the reason (``skipped`` and ``error`` notes, and ``indexed`` ones with a
warning such as invalid YAML); ``fix_for`` turns it into the next step, in French (the web UI) or English.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

from services.catalog.models import NoteRecord, NoteStatus

OUTSIDE_VAULT = "symlink pointing outside the vault: not read (ObsiRAG reads only the vault)"
Lang = Literal["fr", "en"]

# (how the reason starts, the fix in French, the fix in English); the first match wins.
_FIXES: tuple[tuple[str, str, str], ...] = (
    (
        "invalid yaml frontmatter",
        "corrige le YAML entre les lignes --- en tête de la note (elle est indexée sans ses propriétés)",
        "fix the YAML between the --- lines at the top of the note (it is indexed without its properties)",
    ),
    (
        "symlink pointing outside",
        "copie la note dans le coffre, ou supprime le lien symbolique",
        "copy the note into the vault, or remove the symlink",
    ),
    # Documents (services.attachments): what the reader refused, and why.
    (
        "no ocr engine",
        "installe Tesseract et son modèle français : apt-get install tesseract-ocr tesseract-ocr-fra",
        "install Tesseract and its French model: apt-get install tesseract-ocr tesseract-ocr-fra",
    ),
    (
        "low-confidence ocr",
        "ces pages ont été lues avec peu d'assurance : rescanne-les nettement (300 dpi, à plat)",
        "those pages were read with little confidence: scan them again, sharper (300 dpi, flat)",
    ),
    (
        "encrypted document",
        "enregistre une copie sans mot de passe dans le coffre",
        "save a copy without its password in the vault",
    ),
    (
        "unreadable document",
        "le fichier est abîmé ou tronqué : réenregistre-le depuis son application, ou exclus-le",
        "the file is damaged or truncated: save it again from its application, or exclude it",
    ),
    (
        "suspicious archive",
        "ce fichier se décompresse en un volume anormal (bombe ZIP ?) : vérifie-le, ou exclus-le",
        "this file unpacks to an abnormal size (zip bomb?): check it, or exclude it",
    ),
    (
        "too many pages",
        "scinde le document, ou relève OBSIRAG_ATTACHMENT_MAX_PAGES",
        "split the document, or raise OBSIRAG_ATTACHMENT_MAX_PAGES",
    ),
    (
        "oversized document",
        "relève OBSIRAG_ATTACHMENT_MAX_MB pour ce type, ou exclus-le",
        "raise OBSIRAG_ATTACHMENT_MAX_MB for its kind, or exclude it",
    ),
    (
        "image too large",
        "réduis l'image, ou exclus-la (OBSIRAG_EXCLUDE)",
        "shrink the image, or exclude it (OBSIRAG_EXCLUDE)",
    ),
    ("no text found", "ce document ne contient aucun texte lisible", "this document holds no readable text"),
    (
        "oversized",
        "scinde la note, ou relève OBSIRAG_MAX_FILE_MB",
        "split the note, or raise OBSIRAG_MAX_FILE_MB",
    ),
    (
        "binary content",
        "ce n'est pas du texte : renomme-le sans .md, ou exclus-le (OBSIRAG_EXCLUDE)",
        "this is not text: rename it without .md, or exclude it (OBSIRAG_EXCLUDE)",
    ),
    (
        "not a regular file",
        "remplace-le par un fichier ordinaire, ou exclus-le (OBSIRAG_EXCLUDE)",
        "replace it with a plain file, or exclude it (OBSIRAG_EXCLUDE)",
    ),
)
_RETRY = (
    "regarde le journal de l'indexeur, puis « Réindexer le coffre »",
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


# The catalog stores reasons in English (the JSON of ``obsirag status`` keeps them so); said in French by the
# web UI and the French CLI. A reason not known here shows as it is.
_FRENCH_REASONS = (
    (re.compile(r"^low-confidence OCR: pages (.+)$"), r"lecture OCR incertaine : pages \1"),
    (re.compile(r"^(.+): pages (.+) not read$"), r"\1 : pages \2 non lues"),
    (re.compile(r"^unreadable document: (.+)$", re.S), r"document illisible : \1"),
    (re.compile(r"^no text found in the document$"), "aucun texte trouvé dans le document"),
    (
        re.compile(r"^no text found in the image: OCR read no real words, indexed without chunks$"),
        "aucun texte trouvé dans l'image : l'OCR n'a lu aucun vrai mot, indexée sans passages",
    ),
    (
        re.compile(r"^binary content: NUL bytes in the first (\d+) KB$"),
        r"contenu binaire : octets nuls dans les \1 premiers Ko",
    ),
    (re.compile(r"^binary content: invalid (.+)$"), r"contenu binaire : \1 invalide"),
    (re.compile(r"^binary content: (\d+)% control characters$"), r"contenu binaire : \1 % de caractères de contrôle"),
    (re.compile(r"^oversized: (.+) MB > (.+) MB limit$"), r"trop grande : \1 Mo pour une limite de \2 Mo"),
    (re.compile(r"^not a regular file$"), "pas un fichier ordinaire"),
    (
        re.compile("^" + re.escape(OUTSIDE_VAULT) + "$"),
        "lien symbolique vers l'extérieur du coffre : non lu (ObsiRAG ne lit que le coffre)",
    ),
    (re.compile(r"^invalid YAML frontmatter: (.+)$", re.S), r"propriétés YAML invalides : \1"),
)


def reason_in(message: str | None, lang: Lang = "fr") -> str:
    """A stored reason in ``lang``: French from the known English ones, else as it is."""
    text = (message or "").strip()
    if lang == "fr":
        for pattern, french_text in _FRENCH_REASONS:
            if pattern.match(text):
                return pattern.sub(french_text, text)
    return text


def note_problems(records: list[NoteRecord], lang: Lang = "fr") -> list[NoteProblem]:
    """Each record that is not simply indexed: skipped, failed, or indexed with a warning."""
    return [
        NoteProblem(path=r.path, status=r.status, reason=r.message or "", fix=fix_for(r.message or "", lang))
        for r in records
        if r.status != NoteStatus.INDEXED or r.message
    ]
