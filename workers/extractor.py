"""The extract worker: consumes the ``extract`` queue (documents' text, scans through OCR), one file at a time,
and the ``connect`` queue (connected mail and calendars, read from their servers)."""

from __future__ import annotations

import logging

from services.attachments import ocr
from services.attachments.cache import ExtractionCache
from services.config import load_settings
from services.lifeline import watch_parent
from services.system.connectors import ConnectorHandlers
from services.system.handlers.extractor import ExtractorHandlers
from services.system.queues import Queues
from workers.process import run_in_background, run_until_stopped, setup_logging, start_consumer, stop_on_signals

log = logging.getLogger(__name__)


def main() -> None:
    settings = load_settings()
    setup_logging(settings, "extractor")
    run_in_background(settings)  # enrichment waits: the index, the pages and the model come first
    watch_parent()  # gone with the supervisor, even one killed -9
    stop = stop_on_signals()
    queues = Queues(settings)
    handlers = ExtractorHandlers(settings, queues)
    if interrupted := handlers.take_back():  # what a killed extractor was reading, read again first
        log.info("lecture reprise après un arrêt brutal : %s", ", ".join(interrupted))
    queues.serve(handlers, "extract")
    queues.serve(ConnectorHandlers(settings, queues), "connect")
    consumers = [
        start_consumer(queues.hueys["extract"], 1),  # one document at a time: OCR takes a core
        start_consumer(queues.hueys["connect"], 1, periodic=True),  # mail and calendars, every minute those due
    ]
    log.info("extractor ready: %d documents read so far", handlers.cache.count())
    try:
        ocr.check_engine(settings.ocr_languages)
    except ocr.OcrUnavailable as exc:  # optional: scans and images are then recorded skipped, with this reason
        log.warning("%s: scanned pages and images will be skipped", exc)
    run_until_stopped(settings, "extractor", stop, consumers, details=lambda: _details(handlers.cache))


def _details(cache: ExtractionCache) -> dict[str, object]:
    return {"reading": [p.model_dump() for p in cache.under_way()]}


if __name__ == "__main__":
    main()
