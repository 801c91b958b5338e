"""What the e5 model's readers derive from the wheel's file once, kept in the model cache for later starts."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path


def file_tag(model_file: Path) -> str:
    """The model file's size and time: a new wheel's file gets new cache names."""
    stat = model_file.stat()
    return f"{stat.st_size}-{stat.st_mtime_ns}"


def cached_bytes(cache: Path | None, name: str, build: Callable[[], bytes]) -> bytes:
    """``build()``, read from ``cache / name`` when an earlier start wrote it there, else built and written."""
    if cache is None:
        return build()
    kept = cache / name
    try:
        return kept.read_bytes()
    except OSError:
        pass
    built = build()
    with contextlib.suppress(OSError):  # a read-only cache: built again at the next start, as before
        cache.mkdir(parents=True, exist_ok=True)
        partial = kept.with_name(f"{kept.name}.{os.getpid()}.part")
        partial.write_bytes(built)
        partial.replace(kept)  # whole or absent: two processes starting at once each write their own part
    return built
