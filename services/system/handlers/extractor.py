"""The extract worker's task body (``extract`` queue): read a document once, then hand it to the indexer."""

from __future__ import annotations

import logging
from typing import Literal

from services import vault
from services.attachments.cache import ExtractionCache
from services.attachments.isolated import extract_isolated
from services.config import Settings
from services.indexing import attachments
from services.system.queues import EVENT_PRIORITY, Queues

log = logging.getLogger(__name__)


class ExtractorHandlers:
    """Reads documents (text layers, OCR) into the extraction cache, one at a time, off the indexing path."""

    kind: Literal["extractor"] = "extractor"

    def __init__(self, settings: Settings, queues: Queues) -> None:
        self.settings = settings
        self.queues = queues
        self.cache = ExtractionCache(settings.extraction_cache_path)

    def take_back(self) -> list[str]:
        """At start: the documents a killed extractor was reading (their progress rows, still shown on
        /admin as being read), queued again first, rather than left to the next reconcile (minutes away)."""
        interrupted = [progress.path for progress in self.cache.under_way()]
        self.cache.clear_progress()
        for path in interrupted:
            self.queues.extract_document(path, priority=EVENT_PRIORITY)
        return interrupted

    def extract_document(self, path: str) -> str:
        """``cached``, ``under way`` (another task reads it), ``gone``, or the extraction's status."""
        kind = attachments.kind_of(path, self.settings)
        try:
            file = vault.resolve_in_vault(self.settings.vault, path)
            digest = attachments.content_hash(file) if kind else ""
        except (vault.PathOutsideVault, OSError):
            digest = ""
        if not digest:  # gone, moved or not a document any more: the indexer's own sync tells it so
            self.queues.sync_note(path, priority=EVENT_PRIORITY)
            return "gone"
        if self.cache.get(digest) is not None:
            outcome = "cached"
        elif self.cache.in_progress(path, digest):
            return "under way"
        else:
            extraction = extract_isolated(file, kind or "", self.settings, path, digest)
            self.cache.put(digest, extraction)
            outcome = extraction.status.value
            log.info("read %s: %s, %d pages%s", path, outcome, extraction.page_count, _why(extraction.reason))
        self.queues.sync_note(path, priority=EVENT_PRIORITY)  # the indexer now finds its text in the cache
        return outcome


def _why(reason: str) -> str:
    return f" ({reason})" if reason else ""
