"""Which vault files ObsiRAG reads, and the one way a vault-relative path becomes a file path (never outside)."""

from __future__ import annotations

import hashlib
import os
import posixpath
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path, PurePosixPath, PureWindowsPath

import pathspec

NOTE_SUFFIX = ".md"


class PathOutsideVault(ValueError):
    """A path that leads out of the vault: absolute, ``..`` escape, or a symlink pointing outside."""


def walk_vault(
    vault: Path,
    exclude: list[str],
    outside_links: bool = False,
    suffix: str | tuple[str, ...] = "",
    under: str = "",
) -> Iterator[str]:
    """Vault-relative POSIX paths of every file the exclusion globs keep (notes and attachments), sorted.

    Dot-folders and dot-files are skipped, symlinked folders are not entered (they lead out of the vault or
    duplicate notes), symlinked files count only if they stay inside, or with ``outside_links`` (the
    reconcile, which records them as skipped, with the reason, never reading them); only names ending with
    ``suffix`` (any case) when given; only those in the folder ``under`` (vault-relative) when given, as the
    whole walk would list them. This is the one walk: the index and the web renderer's link resolution both
    list the vault through it."""
    root = vault.resolve()
    spec = _exclusion_spec(tuple(exclude))
    start = root / under if under else root
    if under and not _walked_folder(root, start, under, spec):
        return
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(start):
        folder = Path(dirpath).relative_to(root).as_posix().removeprefix(".").lstrip("/")
        dirnames[:] = [d for d in dirnames if _keeps_folder(posixpath.join(folder, d), spec)]
        names = (n for n in filenames if not n.startswith(".") and n.lower().endswith(suffix))
        paths = (posixpath.join(folder, name) for name in names)
        found.extend(p for p in paths if not spec.match_file(p) and (outside_links or _stays_inside(root, p)))
    yield from sorted(found)


def iter_vault_paths(
    vault: Path,
    exclude: list[str],
    outside_links: bool = False,
    attachments: list[str] | tuple[str, ...] = (),
    under: str = "",
) -> Iterator[str]:
    """The notes (``.md`` files) among ``walk_vault``'s paths, and the documents whose extensions
    ``attachments`` names (``OBSIRAG_ATTACHMENTS``: indexed beside the notes); ``under``: in that folder only."""
    return walk_vault(vault, exclude, outside_links, suffix=_suffixes(attachments), under=under)


def is_indexable(rel_path: str, exclude: list[str], attachments: list[str] | tuple[str, ...] = ()) -> bool:
    """Whether ``iter_vault_paths`` would list ``rel_path``: a note or a listed document ``may_read`` allows
    (the file itself is not looked at)."""
    return rel_path.lower().endswith(_suffixes(attachments)) and may_read(rel_path, exclude)


def may_read(rel_path: str, exclude: list[str]) -> bool:
    """The one rule for what ObsiRAG may read and show, whatever the file's kind: no dot-file or dot-folder,
    no ``..``, nothing ``OBSIRAG_EXCLUDE`` matches (the file or a folder above it). The indexer, the watcher,
    the viewers, file serving and the MCP tools all ask it (issue #41.6); the file itself is not looked at."""
    rel = rel_path.replace("\\", "/")
    parts = rel.split("/")
    if any(p in ("", "..") or p.startswith(".") for p in parts):
        return False
    spec = _exclusion_spec(tuple(exclude))
    folders = ["/".join(parts[:i]) for i in range(1, len(parts))]
    return not spec.match_file(rel) and all(_keeps_folder(f, spec) for f in folders)


def _suffixes(attachments: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    return (NOTE_SUFFIX, *(f".{ext.lower().lstrip('.')}" for ext in attachments))


def _walked_folder(root: Path, start: Path, under: str, spec: pathspec.PathSpec) -> bool:
    """Whether the whole walk enters ``under``: a real folder (no symlink on the way), no folder above it or
    itself a dot-folder or excluded."""
    parts = under.strip("/").split("/")
    folders = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return start.is_dir() and start.resolve() == start and all(_keeps_folder(f, spec) for f in folders)


def _keeps_folder(folder: str, spec: pathspec.PathSpec) -> bool:
    """Dot-folders (``.obsidian``, ``.trash``…) and excluded folders are skipped with all they hold."""
    name = folder.rsplit("/", 1)[-1]
    return not name.startswith(".") and not spec.match_file(folder + "/")


def _stays_inside(root: Path, rel_path: str) -> bool:
    path = root / rel_path
    try:
        return not path.is_symlink() or path.resolve().is_relative_to(root)
    except RuntimeError:  # a symlink loop (Python 3.11 raises; later versions return the path)
        return False


@lru_cache(maxsize=32)
def _exclusion_spec(patterns: tuple[str, ...]) -> pathspec.PathSpec:
    """``OBSIRAG_EXCLUDE`` as gitignore lines (Windows separators accepted)."""
    lines = [raw.strip().replace("\\", "/") for raw in patterns]
    return pathspec.GitIgnoreSpec.from_lines(line for line in lines if line.strip("/"))


def resolve_in_vault(vault: Path, rel_path: str) -> Path:
    """The absolute, symlink-free path of ``rel_path``; ``PathOutsideVault`` if it leads out."""
    if "\x00" in rel_path:  # no file name holds one, and the OS calls raise ValueError on it
        raise PathOutsideVault(f"null byte in path refused: {rel_path!r}")
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
