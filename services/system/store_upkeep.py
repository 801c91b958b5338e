"""The indexer's upkeep of its store between tasks: the search graphs built once the index is quiet (#34).

A first index or a bulk import writes thousands of points into the embedded store's plain segment, which every
search then scans whole. Once the index queue has been empty for two looks in a row (a minute apart) and
enough points were written since the last time, the store builds its graphs beside the live shard
(``services.retrieval.store.edge_optimize``); a Qdrant server builds its own. A long first index does not
wait for the quiet: past ``busy_points`` the plain segment is built as it goes, which bounds the indexer's
memory (at 50,000 notes the plain segment alone held 1.6 GB). The shard closed by the switch leaves its memory
in the heap's free lists: handed back at once (``heap.give_back``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from services.retrieval.store import StoreClosedError, VectorStore
from services.system import heap

log = logging.getLogger(__name__)

CHECK_SECONDS = 60.0
QUIET_CHECKS = 2  # looks in a row with an empty queue: not a pause between two batches of a first index


class StoreUpkeep:
    """Looks at the index queue and the store every ``CHECK_SECONDS``; optimizes when both say so."""

    def __init__(
        self, store: VectorStore, index_pending: Callable[[], int], after_points: int, busy_points: int = 0
    ) -> None:
        self.store, self.index_pending = store, index_pending
        self.after_points, self.busy_points = after_points, busy_points
        self.quiet = 0

    def check(self) -> bool:
        """One look; True when it optimized the store."""
        if not self.after_points:
            return False
        self.quiet = self.quiet + 1 if self.index_pending() == 0 else 0
        waiting = self.store.points_to_optimize()  # a Qdrant server counts none: it builds its graphs by itself
        quiet_enough = self.quiet >= QUIET_CHECKS and waiting >= self.after_points
        if not quiet_enough and not (self.busy_points and waiting >= self.busy_points):
            return False
        self.quiet = 0
        optimized = self.store.optimize_beside()
        if optimized:
            heap.give_back()
        return optimized

    def run(self, stop: threading.Event, every: float = CHECK_SECONDS) -> None:
        while not stop.wait(every):
            try:
                self.check()
            except StoreClosedError:  # the indexer is stopping
                return
            except Exception:  # the live shard is untouched: tried again at a later look
                log.exception("building the store's search graphs failed")
