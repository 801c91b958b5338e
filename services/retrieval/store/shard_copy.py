"""A shard's copy for a build beside it (``edge_optimize``), in two passes, so that writes wait only for the second.

The first pass copies every file with no lock held, while writes go on (5.4 s for the 2.5 GB shard of a
50,000-note vault: every save waited for it). The second, under the store's write lock after a flush, copies
again only the files that changed since the first pass looked at them, and removes those gone: the built
segments, nearly all the bytes, do not change between the passes.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

# A file's times are the kernel's clock ticks, a few ms apart: written in the tick its first copy was read, a
# file shows no change. Any file written this close to the first pass is copied again.
RECENT_NS = 2_000_000_000


@dataclass
class FirstPass:
    """What the first pass copied: each file's (inode, size, modification time) as seen before its copy."""

    began_ns: int
    seen: dict[str, tuple[int, int, int]] = field(default_factory=dict)


def copy_unlocked(source: Path, target: Path) -> FirstPass:
    """Copy ``source`` to the new folder ``target`` while it may be written to."""
    first = FirstPass(began_ns=time.time_ns())
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
    recent = first.began_ns - RECENT_NS
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
