"""The live shard's files read once into the system's page cache, so the first searches after a start or a build
do not read them from disk page by page (#34).

Edge maps a built segment's graph, lexical index and vectors from disk (``edge_folder.shard_config``) and drops
their pages from the system's cache when it closes a shard: after every restart, and after every build (the child
process that built it closed it), each search's first touches went to the disk 4 KB at a time. Read in order, the
same files come in at the disk's pace (1.8 GB at 50,000 notes in under a second here) and stay in the page cache,
which the system takes back under memory pressure. The indexer's own memory does not grow; its resident size as
``ps`` counts it does, by the cached pages its searches map (``bench/store_warmth.py``, docs/performance.md).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from services.retrieval.store.base import SPARSE, TITLE

log = logging.getLogger(__name__)

CHUNK = 1 << 20
# Left on disk: the write-ahead log (written, never searched), the title vectors (read by id for a few candidates)
# and the lexical vectors themselves (a search reads their index). Reading them too took the indexer's resident
# size 340 MB higher for the same searches (the kernel maps a cached page's neighbours with it), tail unchanged.
SKIPPED = frozenset({"wal", f"vector_storage-{TITLE}", f"vector_storage-{SPARSE}"})


def warm_pages(folder: Path) -> int:
    """Read the files under ``folder`` that searches read (all but ``SKIPPED``) once; the bytes read. A file
    removed meanwhile (a switch replaced the shard) is passed over: the switch warms its successor."""
    buffer = bytearray(CHUNK)
    total = 0
    try:
        files = sorted(p for p in folder.rglob("*") if not SKIPPED & set(p.relative_to(folder).parts))
    except OSError:  # the folder renamed away during the walk
        return 0
    for file in files:
        try:
            with file.open("rb", buffering=0) as handle:
                while read := handle.readinto(buffer):
                    total += read
        except OSError:  # a folder, or a file gone
            continue
    return total


def warm_in_background(folder: Path) -> threading.Thread:
    """``warm_pages(folder)`` in a daemon thread (reading releases the interpreter: searches go on meanwhile)."""

    def run() -> None:
        began = time.monotonic()
        read = warm_pages(folder)
        log.info("store pages read into the page cache: %.0f MB in %.1f s", read / 2**20, time.monotonic() - began)

    thread = threading.Thread(target=run, name="store-pages", daemon=True)
    thread.start()
    return thread
