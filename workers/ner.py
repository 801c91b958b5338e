"""The NER worker: consumes the ``enrich`` queue (spaCy entities into the catalog, then into the payload)."""

from __future__ import annotations

import logging

from services.catalog import Catalog
from services.config import load_settings
from services.indexing.entities import EntityExtractor
from services.system.handlers.ner import NerHandlers
from services.system.queues import Queues
from workers.process import run_until_stopped, setup_logging, start_consumer, stop_on_signals

log = logging.getLogger(__name__)


def main() -> None:
    settings = load_settings()
    setup_logging(settings, "ner")
    stop = stop_on_signals()
    queues = Queues(settings)
    catalog = Catalog(settings.catalog_path)
    extractor = EntityExtractor(settings.ner_model)
    extractor.load()
    queues.serve(NerHandlers(settings, catalog, extractor, queues))
    consumers = [start_consumer(queues.hueys["enrich"], 1)]
    # Notes indexed while no NER worker ran (or by another model): their content hash tells.
    missing = catalog.notes_without_entities(extractor.name)
    queues.enqueue_entities(missing)
    log.info("ner ready (%s): %d notes to read", extractor.name, len(missing))
    try:
        run_until_stopped(settings, "ner", stop, consumers, details=lambda: {"model": extractor.name})
    finally:
        catalog.close()


if __name__ == "__main__":
    main()
