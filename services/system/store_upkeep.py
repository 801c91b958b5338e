"""The indexer's upkeep of its store between tasks: the search graphs built once the index is quiet (#34).

A first index or a bulk import writes thousands of points into the embedded store's plain segment, which every
search then scans whole. Once the index queue has been empty for two looks in a row (a minute apart) and
enough points were written since the last time, the store builds its graphs beside the live shard
(``services.retrieval.store.edge_optimize``); a Qdrant server builds its own.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from services.retrieval.store import StoreClosedError, VectorStore

log = logging.getLogger(__name__)

CHECK_SECONDS = 60.0
QUIET_CHECKS = 2  # looks in a row with an empty queue: not a pause between two batches of a first index


class StoreUpkeep:
    """Looks at the index queue and the store every ``CHECK_SECONDS``; optimizes when both say so."""

    def __init__(self, store: VectorStore, index_pending: Callable[[], int], after_points: int) -> None:
        self.store, self.index_pending, self.after_points = store, index_pending, after_points
        self.quiet = 0

    def check(self) -> bool:
        """One look; True when it optimized the store."""
        if not self.after_points:
            return False
        self.quiet = self.quiet + 1 if self.index_pending() == 0 else 0
        if self.quiet < QUIET_CHECKS or self.store.points_to_optimize() < self.after_points:
            return False  # a Qdrant server counts none: it builds its graphs by itself
        self.quiet = 0
        return self.store.optimize_beside()

    def run(self, stop: threading.Event, every: float = CHECK_SECONDS) -> None:
        while not stop.wait(every):
            try:
                self.check()
            except StoreClosedError:  # the indexer is stopping
                return
            except Exception:  # the live shard is untouched: tried again at a later look
                log.exception("building the store's search graphs failed")
