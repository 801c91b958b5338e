"""The NER worker: consumes the ``enrich`` queue (spaCy entities into the catalog, then into the payload)."""

from __future__ import annotations

import logging
import sys

from services.catalog import Catalog
from services.config import load_settings
from services.indexing.entities import EntityExtractor
from services.lifeline import watch_parent
from services.system.handlers.ner import NerHandlers
from services.system.queues import Queues
from workers.process import run_in_background, run_until_stopped, setup_logging, start_consumer, stop_on_signals

log = logging.getLogger(__name__)


def extractor_without_torch(model: str) -> EntityExtractor:
    """The extractor, whose spaCy pipelines load at the first note read: a start with nothing to read (a
    restart on an unchanged vault) pays none of their 5 processor-seconds, most of them compiling the French
    tokenizer's pattern, while every other process starts too (#34). And without torch: spaCy's thinc imports
    it whenever it is installed (~2.7 s of CPU and ~300 MB), and these pipelines never use it. A None entry in
    ``sys.modules`` makes ``import torch`` fail, as if it were absent."""
    sys.modules.setdefault("torch", None)  # type: ignore[arg-type]
    return EntityExtractor(model)


def main() -> None:
    settings = load_settings()
    setup_logging(settings, "ner")
    run_in_background(settings)  # enrichment waits: the index, the pages and the model come first
    watch_parent()  # gone with the supervisor, even one killed -9
    stop = stop_on_signals()
    queues = Queues(settings)
    catalog = Catalog(settings.catalog_path)
    extractor = extractor_without_torch(settings.ner_model)
    queues.serve(NerHandlers(settings, catalog, extractor, queues))
    consumers = [start_consumer(queues.hueys["enrich"], 1)]
    # Notes indexed while no NER worker ran (or by another model): their content hash tells.
    missing = catalog.notes_without_entities(extractor.name)
    queued = queues.enqueue_entities(missing, unless_queued=True)
    log.info("ner ready (%s): %d notes to read (%d queued now)", extractor.name, len(missing), queued)
    try:
        run_until_stopped(settings, "ner", stop, consumers, details=lambda: {"model": extractor.name})
    finally:
        catalog.close()


if __name__ == "__main__":
    main()
