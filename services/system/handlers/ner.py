"""The NER worker's task body (``enrich`` queue)."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Literal

from services.catalog import Catalog
from services.config import Settings
from services.indexing.entities import EntityExtractor, enrich_note
from services.system.client import DOWN
from services.system.queues import Queues

log = logging.getLogger(__name__)
FIRST_DELAY = 0.5
REDIS_PATIENCE_SECONDS = 120.0  # the supervisor restarts a Redis that died within seconds (its backoff: 30 s at most)


class NerHandlers:
    """The NER worker's task (``enrich`` queue)."""

    kind: Literal["ner"] = "ner"

    def __init__(self, settings: Settings, catalog: Catalog, extractor: EntityExtractor, queues: Queues) -> None:
        self.settings = settings
        self.catalog = catalog
        self.extractor = extractor
        self.queues = queues

    def extract_entities(self, path: str) -> str:
        """NER for one note; when its entities changed, the indexer copies them into the note's chunks."""
        outcome = enrich_note(self.settings, self.catalog, self.extractor, path, datetime.now(UTC))
        if outcome == "updated":
            self._apply_once_redis_answers(path)
        return outcome

    def _apply_once_redis_answers(self, path: str) -> None:
        """The indexer's task that copies the entities into the note's chunks, queued once Redis answers: the
        catalog holds them now, so a retry of this task would find them unchanged and queue nothing (the chunks
        would lack them until the note is indexed again)."""
        deadline, delay = time.monotonic() + REDIS_PATIENCE_SECONDS, FIRST_DELAY
        while True:
            try:
                self.queues.apply_entities(path)
                return
            except DOWN:  # FileNotFoundError too: the socket is gone while the supervisor restarts Redis
                if time.monotonic() > deadline:
                    raise
                if delay == FIRST_DELAY:  # once: the worker's own line already says Redis went
                    log.info("les entités de %s attendent le retour de Redis", path)
                time.sleep(delay)  # polling: Redis sends nothing while the supervisor restarts it
                delay = min(delay * 2, 5.0)
