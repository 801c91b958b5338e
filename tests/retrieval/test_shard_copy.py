"""The two-pass copy of a shard's folder: the second pass makes the copy the same as the folder again."""

from __future__ import annotations

import os
import time
from pathlib import Path

from services.retrieval.store.shard_copy import RECENT_NS, copy_changes, copy_unlocked


def _tree(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else None for p in root.rglob("*")}


def _age(file: Path) -> None:
    """Written long before the copy: its time shows any later write."""
    past = time.time_ns() - 10 * RECENT_NS
    os.utime(file, ns=(past, past))


def test_the_second_pass_copies_what_changed_after_the_first_and_only_that(tmp_path: Path) -> None:
    source, target = tmp_path / "shard", tmp_path / "copy"
    (source / "segments" / "built").mkdir(parents=True)
    (source / "segments" / "plain").mkdir()
    (source / "empty").mkdir()
    for name in ("segments/built/vectors.dat", "segments/built/graph.bin", "segments/plain/payload.dat", "wal"):
        (source / name).write_bytes(name.encode() * 100)
        _age(source / name)
    first = copy_unlocked(source, target, time.time_ns())
    assert _tree(target) == _tree(source)
    # Writes while the first pass ran: a file rewritten in place (same size), one added, one and a folder gone.
    (source / "wal").write_bytes(b"W" * len(b"wal" * 100))
    (source / "segments" / "plain" / "new.dat").write_bytes(b"new")
    (source / "segments" / "built" / "graph.bin").unlink()
    (source / "empty").rmdir()
    (source / "segments" / "fresh").mkdir()
    assert copy_changes(source, target, first) == 2  # the wal and the new file; the built vectors stay
    assert _tree(target) == _tree(source)


def test_a_file_written_since_the_flush_is_copied_again_even_if_its_time_did_not_move(tmp_path: Path) -> None:
    """A mapped page written twice between two write-backs stamps its file once: its time cannot be trusted to
    move after the first pass, only to be newer than the flush."""
    source, target = tmp_path / "shard", tmp_path / "copy"
    source.mkdir()
    flushed = time.time_ns()
    (source / "wal").write_bytes(b"a" * 10)
    first = copy_unlocked(source, target, flushed)
    stamp = (source / "wal").stat().st_mtime_ns
    (source / "wal").write_bytes(b"b" * 10)
    os.utime(source / "wal", ns=(stamp, stamp))  # a write its time does not show
    assert copy_changes(source, target, first) == 1
    assert (target / "wal").read_bytes() == b"b" * 10
