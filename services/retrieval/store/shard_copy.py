"""A shard's copy for a build beside it (``edge_optimize``), in two passes, so that writes wait only for the second.

The first pass copies every file with no lock held, while writes go on (5.4 s for the 2.5 GB shard of a
50,000-note vault: every save waited for it). The second, under the store's write lock after a flush, copies
again the files written since the flush that came before the first pass, and removes those gone: the built
segments, nearly all the bytes, are not written between the passes.

A file's modification time tells: a flush writes every mapped page back, which makes the next write to it
fault and stamp the file's time; a write through ``write()`` stamps it too. So a file whose time is older
than that flush was not written since, and its first copy is whole.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

# A file's times are the kernel's coarse clock, a tick (a few ms) behind the one ``time_ns`` reads: a margin.
RECENT_NS = 2_000_000_000


@dataclass
class FirstPass:
    """What the first pass copied: each file's (inode, size, modification time) as seen before its copy;
    ``flushed_ns``: the time before the flush that came before it."""

    flushed_ns: int
    seen: dict[str, tuple[int, int, int]] = field(default_factory=dict)


def copy_unlocked(source: Path, target: Path, flushed_ns: int) -> FirstPass:
    """Copy ``source`` to the new folder ``target`` while it may be written to; ``flushed_ns``: ``time_ns()``
    read just before the shard's last flush."""
    first = FirstPass(flushed_ns=flushed_ns)
    _make_folders(source, target)
    for relative in _files(source):
        try:
            first.seen[relative] = _identity(source / relative)
            _copy(source / relative, target / relative)
        except FileNotFoundError:  # removed meanwhile: the second pass sees it gone
            first.seen.pop(relative, None)
    return first


def copy_changes(source: Path, target: Path, first: FirstPass) -> int:
    """Make ``target`` the same as ``source``, which nothing writes now; returns how many files were copied
    again."""
    _make_folders(source, target)
    present = set(_files(source))
    recent = first.flushed_ns - RECENT_NS
    copied = 0
    for relative in present:
        identity = _identity(source / relative)
        if first.seen.get(relative) != identity or identity[2] >= recent:
            _copy(source / relative, target / relative)
            copied += 1
    for relative in set(_files(target)) - present:
        (target / relative).unlink()
    for folder in sorted((p for p in target.rglob("*") if p.is_dir()), reverse=True):
        if not (source / folder.relative_to(target)).is_dir():
            shutil.rmtree(folder, ignore_errors=True)
    return copied


def _make_folders(source: Path, target: Path) -> None:
    """Every folder of ``source`` in ``target``, the empty ones too (Edge expects them)."""
    for folder, _, _ in os.walk(source):
        (target / Path(folder).relative_to(source)).mkdir(parents=True, exist_ok=True)


def _files(root: Path) -> list[str]:
    return [str(Path(folder, name).relative_to(root)) for folder, _, names in os.walk(root) for name in names]


def _identity(file: Path) -> tuple[int, int, int]:
    status = file.stat()
    return status.st_ino, status.st_size, status.st_mtime_ns


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
