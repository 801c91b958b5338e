"""A rebuild's next index built with its search graphs before its switch (#34).

Switched in as written, a big next shard was one plain segment: every search scanned all its points and every
start rebuilt its lexical index in memory until the store's upkeep built it minutes later (at 50,000 notes a
restart then spent 9 s loading the store). So once every note is in it, a next store of
``store_optimize_after_points`` points or more has its graphs built beside it in a child process
(``EdgeStore.optimize_beside``), in a thread, while the live index keeps answering; the notes saved meanwhile go
into the built shard's plain part. A Qdrant server builds its own graphs: it counts no points to build.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from services.retrieval.store import VectorStore

log = logging.getLogger(__name__)


class NextGraphs:
    """The build of ``store``'s graphs, once per rebuild; ``said(building)`` records each change of state."""

    def __init__(self, store: VectorStore, after_points: int, said: Callable[[bool], None]) -> None:
        self.store, self.after_points, self.said = store, after_points, said
        self._thread: threading.Thread | None = None

    @property
    def building(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> bool:
        """True when a build starts now; False when one already ran or the store is too small to be worth it."""
        if self._thread is not None or not self.after_points or self.store.points_to_optimize() < self.after_points:
            return False
        self.said(True)
        self._thread = threading.Thread(target=self._build, name="next-graphs", daemon=True)
        self._thread.start()
        return True

    def wait(self) -> None:
        """Until the build (if one runs) ends."""
        if self._thread is not None:
            self._thread.join()

    def _build(self) -> None:
        began = time.monotonic()
        try:
            built = self.store.optimize_beside()
        except Exception:  # the next shard is whole without its graphs: switched in as it is, built later
            log.exception("building the next index's search graphs failed")
            built = False
        self.said(False)
        if built:
            log.info("the next index's search graphs built in %.0f s", time.monotonic() - began)
