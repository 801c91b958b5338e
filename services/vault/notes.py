"""Reading an Obsidian vault: which files are notes, and what one note says. Nothing here writes.

Exclusion globs (``OBSIRAG_EXCLUDE``) are gitignore lines, read by ``pathspec``: ``*`` and ``?`` stay
inside one path segment, ``**`` spans folders, a pattern without ``/`` (or with a trailing one only)
matches a file or folder name at any depth (``Templates``, ``*.excalidraw.md``), a pattern with a ``/``
matches from the vault root (``/Templates``, ``Daily/2023/**``), a trailing ``/`` matches folders only,
``!pattern`` keeps again what an earlier pattern excluded (not inside an excluded folder), and a pattern
matching a folder excludes everything below it.
"""

from __future__ import annotations

import base64
import codecs
import os
import posixpath
import re
import stat
from collections.abc import Callable, Iterable
from datetime import date, datetime
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from services.language.dates import to_datetime
from services.vault.models import NoteType, ParsedNote
from services.vault.paths import PathOutsideVault, file_hash, resolve_in_vault
from services.vault.reader import MarkdownDoc, read_markdown
from services.vault.syntax import Heading, WikiLink

SNIFF_BYTES = 8192
_MB = 1024 * 1024  # same unit as Settings.max_file_bytes
_MAX_CONTROL_RATIO = 0.1  # real text has almost no control characters; binaries have ~10% or NULs
_MAX_FRONTMATTER_NODES = 10_000  # YAML aliases can make a tiny file describe a huge (or cyclic) tree
_MAX_FRONTMATTER_DEPTH = 50
_FAST_YAML = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml ships in the wheels; else pure Python


class NoteSkipped(Exception):
    """A file deliberately left out of the index; ``reason`` is the human message for the catalog."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- which files are notes ------------------------------------------------------------------


# --- reading one note -----------------------------------------------------------------------


def read_note(vault: Path, rel_path: str, max_bytes: int, now: datetime | None = None) -> ParsedNote:
    """Parse one note. Raises ``NoteSkipped`` (oversized, binary, not a file), ``FileNotFoundError``
    when it is gone and ``PathOutsideVault``. ``now`` is accepted for symmetry: nothing needs a clock."""
    raw, st = _read_bytes(resolve_in_vault(vault, rel_path), max_bytes)
    return _parse_note(rel_path, raw, st)


def _parse_note(rel_path: str, raw: bytes, st: os.stat_result) -> ParsedNote:
    text, encoding = decode_note(raw)
    frontmatter, frontmatter_error, body = split_frontmatter(text)
    doc = read_markdown(body)  # the one parse: headings, links, tags here, then chunks and entities
    headings = doc.headings
    created, modified = _note_dates(frontmatter, st)
    note = ParsedNote(
        path=posixpath.normpath(rel_path),
        title=_title(frontmatter, headings, rel_path),
        aliases=_aliases(frontmatter),
        tags=extract_tags(doc, frontmatter),
        links=doc.links,
        headings=headings,
        frontmatter=frontmatter,
        frontmatter_error=frontmatter_error,
        body=body,
        created=created,
        modified=modified,
        note_type=_note_type(rel_path, frontmatter),
        content_hash=file_hash(raw),
        size=st.st_size,
        mtime=st.st_mtime,
        encoding=encoding,
    )
    note._markdown = doc
    return note


def read_note_if_readable(
    vault: Path, rel_path: str, max_bytes: int, wanted: Callable[[bytes], bool] | None = None
) -> ParsedNote | None:
    """``read_note``, or None when the note is gone, unreadable, skipped or outside the vault: for readers
    of indexed notes (chat, learner, NER) that work from the catalog while the vault changes under them.
    ``wanted``: a cheap look at the file's bytes before the parse, None when it says no (a reader looking
    for one thing through a whole vault parses only the notes that may hold it)."""
    try:
        raw, st = _read_bytes(resolve_in_vault(vault, rel_path), max_bytes)
        return _parse_note(rel_path, raw, st) if wanted is None or wanted(raw) else None
    except (OSError, NoteSkipped, PathOutsideVault):
        return None


def _read_bytes(path: Path, max_bytes: int) -> tuple[bytes, os.stat_result]:
    # One open, then fstat on it: the size, mtime and bytes all describe the same file even if it is
    # replaced meanwhile. O_NONBLOCK keeps a FIFO named *.md from hanging the read.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise NoteSkipped("not a regular file")
        if st.st_size > max_bytes:
            raise NoteSkipped(_oversized(st.st_size, max_bytes))
        data = handle.read(max_bytes + 1)  # the file may have grown since fstat
    if len(data) > max_bytes:
        raise NoteSkipped(_oversized(len(data), max_bytes))
    return data, st


def _oversized(size: int, max_bytes: int) -> str:
    return f"oversized: {size / _MB:.1f} MB > {max_bytes / _MB:.1f} MB limit"


_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16: its BOM starts with the UTF-16 LE one
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_CONTROL_BYTES = bytes(b for b in range(256) if (b < 32 and chr(b) not in "\t\n\r\f\b\x1b") or b == 127)
_NOT_CONTROL = bytes(b for b in range(256) if b not in _CONTROL_BYTES)


def decode_note(raw: bytes) -> tuple[str, str]:
    """Text with ``\\n`` line ends and the encoding used; ``NoteSkipped`` for binary content."""
    for bom, codec in _WIDE_BOMS:
        if raw.startswith(bom):  # Windows tools still write UTF-16 now and then
            try:
                return _unix_newlines(raw.decode(codec)), codec
            except UnicodeDecodeError:
                raise NoteSkipped(f"binary content: invalid {codec}") from None
    _refuse_binary(raw[:SNIFF_BYTES])
    data = raw.removeprefix(codecs.BOM_UTF8)
    for codec in ("utf-8", "cp1252"):
        try:
            return _unix_newlines(data.decode(codec)), codec
        except UnicodeDecodeError:
            continue
    return _unix_newlines(data.decode("latin-1")), "latin-1"  # decodes any byte string


def _refuse_binary(sample: bytes) -> None:
    if b"\0" in sample:
        raise NoteSkipped(f"binary content: NUL bytes in the first {SNIFF_BYTES // 1024} KB")
    controls = len(sample.translate(None, _NOT_CONTROL))
    if sample and controls / len(sample) > _MAX_CONTROL_RATIO:
        raise NoteSkipped(f"binary content: {controls / len(sample):.0%} control characters")


def _unix_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


# --- frontmatter ----------------------------------------------------------------------------

_FRONTMATTER = re.compile(r"\A---[ \t]*\n(?P<yaml>.*?\n)??---[ \t]*(?:\n|\Z)", re.S)
_TYPE_FOLDERS = {
    "insights": NoteType.INSIGHT,
    "synapses": NoteType.SYNAPSE,
    "synthesis": NoteType.SYNTHESIS,
    "syntheses": NoteType.SYNTHESIS,
    "conversations": NoteType.CONVERSATION,
    "briefings": NoteType.BRIEFING,
    "research": NoteType.RESEARCH,
}


def split_frontmatter(text: str) -> tuple[dict[str, Any], str | None, str]:
    """(frontmatter, error message or None, body). Never raises: bad YAML gives ``{}`` and a message.
    Values are JSON-safe: YAML dates become ISO strings, keys become strings."""
    match = _FRONTMATTER.match(text)
    if match is None:
        return {}, None, text
    body = text[match.end() :]
    try:
        data = _load_yaml(match["yaml"] or "")
    except Exception as exc:  # PyYAML's constructors also raise ValueError (e.g. `date: 2026-13-45`)
        return {}, _yaml_error(exc), body
    if data is None:
        return {}, None, body
    if not isinstance(data, dict):
        return {}, f"invalid YAML frontmatter: expected key: value pairs, got a {type(data).__name__}", body
    try:
        return _json_safe(data), None, body
    except RecursionError:
        return {}, "invalid YAML frontmatter: too large or too deeply nested", body


def _load_yaml(text: str) -> Any:
    """libyaml's parser under PyYAML's safe constructor: the same values, and a fifth of a note's read saved (the
    pure-Python scanner was a quarter of it). What libyaml refuses, PyYAML's own parser reads again: its message
    names the character at fault, and the rare text only it accepts still gives its values."""
    try:
        return yaml.load(text, Loader=_FAST_YAML)
    except yaml.YAMLError:
        return yaml.safe_load(text)


def _yaml_error(exc: Exception) -> str:
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 2}: " if mark is not None else ""  # +2: 0-based, and the opening ---
    problem = getattr(exc, "problem", None) or str(exc)
    return " ".join(f"invalid YAML frontmatter: {where}{problem}".split())


def _json_safe(data: dict[Any, Any]) -> dict[str, Any]:
    left = _MAX_FRONTMATTER_NODES

    def convert(value: Any, depth: int) -> Any:
        nonlocal left
        left -= 1
        if left < 0 or depth > _MAX_FRONTMATTER_DEPTH:
            raise RecursionError("frontmatter too large")
        if isinstance(value, dict):
            return {str(k): convert(v, depth + 1) for k, v in value.items()}
        if isinstance(value, list | tuple | set):
            return [convert(v, depth + 1) for v in value]
        if isinstance(value, date):  # datetime too
            return value.isoformat()
        if isinstance(value, bytes):
            return base64.b64encode(value).decode("ascii")
        return value if value is None or isinstance(value, str | int | float) else str(value)

    return convert(data, 0)


def _field(frontmatter: dict[str, Any], *names: str) -> Any:
    """The first of ``names`` present, keys compared case-insensitively (``Tags:`` happens)."""
    lowered = {key.lower(): value for key, value in frontmatter.items()}
    return next((lowered[name] for name in names if lowered.get(name) is not None), None)


def _strings(value: Any, separators: re.Pattern[str]) -> list[str]:
    """A YAML list, or one string cut at ``separators``, as stripped non-empty strings."""
    if isinstance(value, list):
        items = [str(v) for v in value if isinstance(v, str | int | float)]
    elif isinstance(value, str | int | float):
        items = separators.split(str(value))
    else:
        items = []
    return [item.strip() for item in items if item.strip()]


def _title(frontmatter: dict[str, Any], headings: list[Heading], rel_path: str) -> str:
    declared = _field(frontmatter, "title")
    if isinstance(declared, str | int | float) and str(declared).strip():
        return str(declared).strip()
    first_h1 = next((h.text for h in headings if h.level == 1), None)
    return first_h1 or PurePosixPath(rel_path).stem


def _aliases(frontmatter: dict[str, Any]) -> list[str]:
    found = [a for name in ("aliases", "alias") for a in _strings(_field(frontmatter, name), _COMMAS)]
    return list(dict.fromkeys(found))


def _note_dates(frontmatter: dict[str, Any], st: os.stat_result) -> tuple[datetime, datetime]:
    declared_created = _first_date(frontmatter, "created", "date")
    declared_modified = _first_date(frontmatter, "updated", "modified")
    file_modified = datetime.fromtimestamp(st.st_mtime).astimezone()
    birth = getattr(st, "st_birthtime", None)  # macOS, BSD, Windows; Linux's stat has none
    file_created = datetime.fromtimestamp(birth).astimezone() if birth else file_modified
    return declared_created or file_created, declared_modified or declared_created or file_modified


def _first_date(frontmatter: dict[str, Any], *names: str) -> datetime | None:
    return next((d for name in names if (d := to_datetime(_field(frontmatter, name)))), None)


def _note_type(rel_path: str, frontmatter: dict[str, Any]) -> NoteType:
    parts = rel_path.lower().split("/")
    if len(parts) < 2 or parts[0] != "obsirag":
        return NoteType.NOTE
    if len(parts) > 2 and parts[1] in _TYPE_FOLDERS:
        return _TYPE_FOLDERS[parts[1]]
    declared = str(_field(frontmatter, "type") or "").strip().lower()
    return NoteType(declared) if declared in {t.value for t in NoteType} else NoteType.NOTE


# --- Markdown body: headings, links, tags (read by services.vault.reader) ------------------------------

_COMMAS = re.compile(r",")
_TAG_SEPARATORS = re.compile(r"[,\s]+")


def extract_headings(body: str | MarkdownDoc) -> list[Heading]:
    """Top-level ATX headings outside code, block ids left out; ``line`` is 0-based within ``body``."""
    return _doc(body).headings


def extract_links(body: str | MarkdownDoc) -> list[WikiLink]:
    """Wikilinks, embeds and Markdown links to ``.md`` files, in order, outside code."""
    return _doc(body).links


def extract_tags(body: str | MarkdownDoc, frontmatter: dict[str, Any]) -> list[str]:
    """Frontmatter ``tags``/``tag`` then inline ``#tags``, without ``#``, deduplicated ignoring case."""
    declared = [t for name in ("tags", "tag") for t in _strings(_field(frontmatter, name), _TAG_SEPARATORS)]
    return _dedupe_tags(tag.strip().lstrip("#").rstrip("/") for tag in [*declared, *_doc(body).tags])


def _doc(body: str | MarkdownDoc) -> MarkdownDoc:
    return read_markdown(body) if isinstance(body, str) else body


def _dedupe_tags(tags: Iterable[str]) -> list[str]:
    first_spelling: dict[str, str] = {}
    for tag in tags:
        if tag and not tag.isdigit():  # "#2024" is a number, not a tag
            first_spelling.setdefault(tag.casefold(), tag)
    return list(first_spelling.values())
