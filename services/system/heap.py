"""Memory a big sync freed, given back to the system.

glibc keeps what a process frees in its heap arenas for reuse: after a 2,000-page PDF (6,000 chunks through
the model, their sparse vectors and payloads) the indexer's resident memory stayed ~45 % higher for good.
``malloc_trim(0)`` hands the free pages back (bench/fair_indexing.py, docs/performance.md). Elsewhere (macOS,
musl) there is no such call and nothing to do.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys
from functools import cache

TRIM_AFTER_CHUNKS = 256  # a sync that embedded this many chunks is worth a trim (~10 ms)


@cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None


def give_back() -> bool:
    """Collect, then return the heap's free pages to the system; whether the platform could."""
    gc.collect()
    libc = _libc()
    return bool(libc is not None and libc.malloc_trim(0) >= 0)
