"""The NER worker's task body (``enrich`` queue)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from services.catalog import Catalog
from services.config import Settings
from services.indexing.entities import EntityExtractor, enrich_note
from services.system.queues import Queues


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
            self.queues.apply_entities(path)
        return outcome
