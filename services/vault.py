"""Reading an Obsidian vault: which files are notes, and what one note says. Nothing here writes.

Exclusion globs (``OBSIRAG_EXCLUDE``) follow gitignore habits: ``*`` and ``?`` stay inside one path
segment, ``**`` spans folders, a pattern without ``/`` matches a file or folder name at any depth
(``Templates``, ``*.excalidraw.md``), a pattern with ``/`` matches from the vault root
(``/Templates``, ``Daily/2023/**``), and a pattern matching a folder excludes everything below it.
"""

from __future__ import annotations

import base64
import codecs
import hashlib
import os
import posixpath
import re
import stat
import unicodedata
from collections.abc import Iterable, Iterator
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import unquote

import yaml

from services.dates import to_datetime
from services.models import Heading, NoteType, ParsedNote, WikiLink

NOTE_SUFFIX = ".md"
SNIFF_BYTES = 8192
_MB = 1024 * 1024  # same unit as Settings.max_file_bytes
_MAX_CONTROL_RATIO = 0.1  # real text has almost no control characters; binaries have ~10% or NULs
_MAX_FRONTMATTER_NODES = 10_000  # YAML aliases can make a tiny file describe a huge (or cyclic) tree
_MAX_FRONTMATTER_DEPTH = 50


class PathOutsideVault(ValueError):
    """A path that leads out of the vault: absolute, ``..`` escape, or a symlink pointing outside."""


class NoteSkipped(Exception):
    """A file deliberately left out of the index; ``reason`` is the human message for the catalog."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- which files are notes ------------------------------------------------------------------


# A compiled exclusion glob, and whether it matches a name at any depth (no "/" in the pattern).
_Exclude = tuple[re.Pattern[str], bool]
_GLOB_TOKEN = re.compile(r"\*\*/|\*\*|\*|\?|\[[^\]]+\]|.", re.S)
_GLOB_REGEX = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}


def iter_vault_paths(vault: Path, exclude: list[str], outside_links: bool = False) -> Iterator[str]:
    """Vault-relative POSIX paths of every indexable note, sorted. Symlinked folders are not entered
    (they lead out of the vault or duplicate notes); symlinked files count only if they stay inside, or
    with ``outside_links`` (the reconcile, which records them as skipped, with the reason, never reading them)."""
    root = vault.resolve()
    excludes = _compile_excludes(tuple(exclude))
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        folder = Path(dirpath).relative_to(root).as_posix().removeprefix(".")
        dirnames[:] = [d for d in dirnames if _keeps_folder(posixpath.join(folder, d), excludes)]
        paths = (posixpath.join(folder, name) for name in filenames)
        found.extend(p for p in paths if _is_note_path(p, excludes) and (outside_links or _stays_inside(root, p)))
    yield from sorted(found)


def is_indexable(rel_path: str, exclude: list[str]) -> bool:
    """Whether ``iter_vault_paths`` would list ``rel_path`` (the file itself is not looked at)."""
    return _is_note_path(rel_path.replace("\\", "/"), _compile_excludes(tuple(exclude)))


def _is_note_path(rel_path: str, excludes: tuple[_Exclude, ...]) -> bool:
    parts = rel_path.split("/")
    if not rel_path.lower().endswith(NOTE_SUFFIX) or any(p in ("", "..") or p.startswith(".") for p in parts):
        return False
    folders = ["/".join(parts[:i]) for i in range(1, len(parts))]
    return not _matches(rel_path, excludes) and all(_keeps_folder(f, excludes) for f in folders)


def _keeps_folder(folder: str, excludes: tuple[_Exclude, ...]) -> bool:
    """Dot-folders (``.obsidian``, ``.trash``…) and excluded folders are skipped with all they hold."""
    name = folder.rsplit("/", 1)[-1]
    return not name.startswith(".") and not _matches(folder, excludes, is_folder=True)


def _matches(path: str, excludes: tuple[_Exclude, ...], is_folder: bool = False) -> bool:
    name = path.rsplit("/", 1)[-1]
    for regex, anywhere in excludes:
        subject = name if anywhere else path
        if regex.fullmatch(subject) or (is_folder and regex.fullmatch(subject + "/")):
            return True
    return False


def _stays_inside(root: Path, rel_path: str) -> bool:
    path = root / rel_path
    try:
        return not path.is_symlink() or path.resolve().is_relative_to(root)
    except RuntimeError:  # a symlink loop (Python 3.11 raises; later versions return the path)
        return False


@lru_cache(maxsize=32)
def _compile_excludes(patterns: tuple[str, ...]) -> tuple[_Exclude, ...]:
    excludes = []
    for raw in patterns:
        pattern = raw.strip().replace("\\", "/")
        if pattern.strip("/"):
            anywhere = "/" not in pattern.rstrip("/")
            excludes.append((_glob_regex(pattern.strip("/")), anywhere))
    return tuple(excludes)


def _glob_regex(pattern: str) -> re.Pattern[str]:
    parts = []
    for token in _GLOB_TOKEN.findall(pattern):
        if token in _GLOB_REGEX:
            parts.append(_GLOB_REGEX[token])
        elif len(token) > 2 and token[0] == "[":  # [abc], [!abc]
            members = token[1:-1].replace("\\", "\\\\")
            parts.append("[" + ("^" + members[1:] if members[0] == "!" and len(members) > 1 else members) + "]")
        else:
            parts.append(re.escape(token))
    return re.compile("".join(parts), re.S)


def resolve_in_vault(vault: Path, rel_path: str) -> Path:
    """The absolute, symlink-free path of ``rel_path``; ``PathOutsideVault`` if it leads out."""
    if PurePosixPath(rel_path).is_absolute() or PureWindowsPath(rel_path).anchor:
        raise PathOutsideVault(f"absolute path refused: {rel_path!r}")
    root = vault.resolve()
    try:
        target = (root / rel_path).resolve()
    except RuntimeError as exc:  # symlink loop: nothing to read there, refuse it like an escape
        raise PathOutsideVault(f"symlink loop: {rel_path!r}") from exc
    if not target.is_relative_to(root):
        raise PathOutsideVault(f"path leads outside the vault: {rel_path!r}")
    return target


def file_hash(data: bytes) -> str:
    """sha256 hex of a file's bytes: the ``content_hash`` used everywhere."""
    return hashlib.sha256(data).hexdigest()


# --- reading one note -----------------------------------------------------------------------


def read_note(vault: Path, rel_path: str, max_bytes: int, now: datetime | None = None) -> ParsedNote:
    """Parse one note. Raises ``NoteSkipped`` (oversized, binary, not a file), ``FileNotFoundError``
    when it is gone and ``PathOutsideVault``. ``now`` is accepted for symmetry: nothing needs a clock."""
    raw, st = _read_bytes(resolve_in_vault(vault, rel_path), max_bytes)
    text, encoding = decode_note(raw)
    frontmatter, frontmatter_error, body = split_frontmatter(text)
    headings = extract_headings(body)
    created, modified = _note_dates(frontmatter, st)
    return ParsedNote(
        path=posixpath.normpath(rel_path),
        title=_title(frontmatter, headings, rel_path),
        aliases=_aliases(frontmatter),
        tags=extract_tags(body, frontmatter),
        links=extract_links(body),
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


def read_note_if_readable(vault: Path, rel_path: str, max_bytes: int) -> ParsedNote | None:
    """``read_note``, or None when the note is gone, unreadable, skipped or outside the vault: for readers
    of indexed notes (chat, learner, NER) that work from the catalog while the vault changes under them."""
    try:
        return read_note(vault, rel_path, max_bytes)
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
}


def split_frontmatter(text: str) -> tuple[dict[str, Any], str | None, str]:
    """(frontmatter, error message or None, body). Never raises: bad YAML gives ``{}`` and a message.
    Values are JSON-safe: YAML dates become ISO strings, keys become strings."""
    match = _FRONTMATTER.match(text)
    if match is None:
        return {}, None, text
    body = text[match.end() :]
    try:
        data = yaml.safe_load(match["yaml"] or "")
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


# --- Markdown body: code, headings, links, tags ----------------------------------------------

_COMMAS = re.compile(r",")
_TAG_SEPARATORS = re.compile(r"[,\s]+")
_FENCE = re.compile(r"^[ \t]*(?:>[ \t]*)*(?:[-*+][ \t]+|\d+[.)][ \t]+)?(`{3,}|~{3,})(.*)$")  # also in quotes, lists
_INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_BLOCK_ID = re.compile(r"(?:^|\s+)\^[A-Za-z0-9-]+$")
_LINK = re.compile(
    r"(?P<embed>!?)(?:\[\[(?P<wiki>[^\[\]\n]+)\]\]"
    r"|\[(?P<text>[^\[\]\n]*)\]\((?P<dest><[^<>\n]+>|[^()\s]+)(?:[ \t]+\"[^\"\n]*\")?\))"
)
_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_NOT_TAG_CONTEXT = re.compile(r"\[\[[^\]\n]*\]\]|\]\([^)\n]*\)|[A-Za-z][\w+.-]*://\S+")
# Obsidian: a tag starts after whitespace, line start or some punctuation (not "/" or "&", so URLs
# and HTML entities stay out) and holds letters, digits, "_", "-" and "/".
_INLINE_TAG = re.compile(r"(?:^|(?<=[\s(\[{,;:!?«“‘>*~|]))#([\w/-]+)", re.M)


def _code_lines(lines: list[str]) -> list[bool]:
    """Which lines belong to fenced code blocks, fences included (an unclosed fence runs to the end)."""
    flags, fence = [], ""
    for line in lines:
        match = _FENCE.match(line)
        if not fence:
            if match and not (match[1][0] == "`" and "`" in match[2]):  # a ``` info string has no backtick
                fence = match[1]
            flags.append(bool(fence))
            continue
        flags.append(True)
        if match and match[1][0] == fence[0] and len(match[1]) >= len(fence) and not match[2].strip():
            fence = ""
    return flags


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group())


def mask_code(body: str) -> str:
    """``body`` with fenced blocks and inline code blanked out, line numbers and offsets preserved."""
    lines = body.split("\n")
    flags = _code_lines(lines)
    masked = (
        " " * len(line) if code else _INLINE_CODE.sub(_blank, line) for line, code in zip(lines, flags, strict=True)
    )
    return "\n".join(masked)


def extract_headings(body: str) -> list[Heading]:
    """ATX headings outside code blocks; ``line`` is 0-based within ``body``."""
    lines = body.split("\n")
    headings = []
    for number, (line, code) in enumerate(zip(lines, _code_lines(lines), strict=True)):
        match = None if code else _ATX.match(line)
        text = _BLOCK_ID.sub("", _CLOSING_HASHES.sub("", (match[2] or "") if match else "")).strip()
        if match and text:
            headings.append(Heading(level=len(match[1]), text=text, line=number))
    return headings


def extract_links(body: str) -> list[WikiLink]:
    """Wikilinks, embeds and Markdown links to ``.md`` files, in order, outside code."""
    links = []
    for match in _LINK.finditer(mask_code(body)):
        embed = bool(match["embed"])
        if match["wiki"] is not None:
            link = _wikilink(match["wiki"], embed)
        else:
            link = _markdown_link(match["text"], match["dest"], embed)
        if link is not None:
            links.append(link)
    return links


def _wikilink(inner: str, embed: bool) -> WikiLink | None:
    target, _, alias = inner.partition("|")
    target, _, subpath = target.rstrip("\\").partition("#")  # tables escape the pipe: [[a\|b]]
    return _link(target, subpath, alias, embed)


def _markdown_link(text: str, dest: str, embed: bool) -> WikiLink | None:
    dest = dest.removeprefix("<").removesuffix(">")
    path, _, fragment = dest.partition("#")
    path = unquote(path)
    if _URL_SCHEME.match(dest) or not path.lower().endswith(NOTE_SUFFIX):
        return None
    return _link(path, unquote(fragment), text, embed)


def _link(target: str, subpath: str, alias: str, embed: bool) -> WikiLink | None:
    target, subpath = target.strip(), subpath.strip()
    if target.lower().endswith(NOTE_SUFFIX):
        target = target[: -len(NOTE_SUFFIX)]
    if not target and not subpath:
        return None
    block = subpath[1:] if subpath.startswith("^") else None
    heading = None if block is not None else subpath
    return WikiLink(
        target=target, heading=heading or None, block=block or None, alias=alias.strip() or None, embed=embed
    )


def extract_tags(body: str, frontmatter: dict[str, Any]) -> list[str]:
    """Frontmatter ``tags``/``tag`` then inline ``#tags``, without ``#``, deduplicated ignoring case."""
    declared = [t for name in ("tags", "tag") for t in _strings(_field(frontmatter, name), _TAG_SEPARATORS)]
    scanned = _NOT_TAG_CONTEXT.sub(_blank, mask_code(body))
    inline = [m[1] for m in _INLINE_TAG.finditer(unicodedata.normalize("NFC", scanned))]
    return _dedupe_tags(tag.strip().lstrip("#").rstrip("/") for tag in [*declared, *inline])


def _dedupe_tags(tags: Iterable[str]) -> list[str]:
    first_spelling: dict[str, str] = {}
    for tag in tags:
        if tag and not tag.isdigit():  # "#2024" is a number, not a tag
            first_spelling.setdefault(tag.casefold(), tag)
    return list(first_spelling.values())
