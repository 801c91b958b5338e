"""The indexer gives a big sync's freed memory back to the system (issue #41.5; figures: bench/fair_indexing.py)."""

from __future__ import annotations

import sys

import psutil
import pytest

from services.system import heap


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_freed_heap_pages_go_back_to_the_system() -> None:
    process = psutil.Process()
    blocks = [bytes(1000) for _ in range(100_000)]  # ~100 MB of malloc'd objects (above pymalloc's 512 bytes)
    kept = blocks[::100]  # what a sync leaves alive, scattered: free() alone cannot shrink the heap
    peak = process.memory_info().rss
    del blocks
    assert process.memory_info().rss > peak - 20e6  # freed, still held by the process
    assert heap.give_back()
    assert process.memory_info().rss < peak - 60e6
    assert len(kept) == 1000
