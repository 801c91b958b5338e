"""The indexer's batch line counts what was written, a document's pages as well as a note's (issue #41.12)."""

from __future__ import annotations

import logging
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.config import Settings
from services.indexing.pipeline import IndexPipeline
from services.retrieval.search import SearchEngine
from services.retrieval.store import EdgeStore
from services.system.handlers.indexer import IndexerHandlers
from services.system.queues import Queues


@pytest.fixture
def handlers(tmp_path: Path, redis_url: str, documents: dict[str, Path], embedder) -> Iterator[IndexerHandlers]:
    vault = tmp_path / "vault"
    (vault / "Docs").mkdir(parents=True)
    shutil.copy(documents["Manuel.pdf"], vault / "Docs/Manuel.pdf")
    (vault / "Note.md").write_text("# Note\n\nUne courte note sur le levain.\n", encoding="utf-8")
    settings = Settings(vault=vault, data_dir=tmp_path / "data", redis_url=redis_url)
    pipeline = IndexPipeline(settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), embedder)
    queues = Queues(settings)
    yield IndexerHandlers(pipeline, SearchEngine(pipeline.store, embedder), queues)
    for huey in queues.hueys.values():
        huey.flush()
    pipeline.store.close()
    pipeline.catalog.close()


def written(caplog: pytest.LogCaptureFixture) -> list[int]:
    lines = [r.getMessage() for r in caplog.records if r.name == "services.system.handlers.indexer"]
    return [int(n) for line in lines for n in re.findall(r"\((\d+) chunks written", line)]


def test_the_batch_line_counts_the_documents_chunks_too(
    handlers: IndexerHandlers, caplog: pytest.LogCaptureFixture, documents: dict[str, Path]
) -> None:
    caplog.set_level(logging.INFO, logger="services.system.handlers.indexer")
    catalog = handlers.pipeline.catalog
    handlers.sync_batch(["Note.md", "Docs/Manuel.pdf"])
    stored = {path: catalog.get_note(path).chunk_count for path in ("Note.md", "Docs/Manuel.pdf")}
    assert stored["Docs/Manuel.pdf"] > stored["Note.md"] >= 1
    assert written(caplog) == [sum(stored.values())] == [handlers.pipeline.store.count()]
    caplog.clear()
    handlers.sync_batch(["Note.md", "Docs/Manuel.pdf"])  # unchanged: nothing said
    assert written(caplog) == []
    shutil.copy(documents["Rapport.docx"], handlers.pipeline.settings.vault / "Docs/Rapport.docx")
    handlers.sync_note("Docs/Rapport.docx")  # as the extractor hands a document over: said too
    assert written(caplog) == [catalog.get_note("Docs/Rapport.docx").chunk_count] and written(caplog)[0] >= 1
