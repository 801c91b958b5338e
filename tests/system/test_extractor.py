"""The extract worker's task against a real Redis: a document read once, in a child process, then indexed."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from services.attachments.cache import ExtractionCache, read_progress
from services.attachments.isolated import extract_isolated
from services.attachments.models import ExtractionStatus
from services.config import Settings
from services.system.handlers.extractor import ExtractorHandlers
from services.system.queues import Queues


@pytest.fixture
def extractor(tmp_path: Path, redis_url: str, documents: dict[str, Path]):
    vault = tmp_path / "vault"
    (vault / "Docs").mkdir(parents=True)
    shutil.copy(documents["Scan.pdf"], vault / "Docs/Scan.pdf")
    settings = Settings(vault=vault, data_dir=tmp_path / "data", redis_url=redis_url)
    queues = Queues(settings)
    for huey in queues.hueys.values():
        huey.flush()
    yield ExtractorHandlers(settings, queues)
    for huey in queues.hueys.values():
        huey.flush()


def test_a_document_is_read_once_then_handed_to_the_indexer(extractor: ExtractorHandlers) -> None:
    assert extractor.extract_document("Docs/Scan.pdf") == "ok"
    index = extractor.queues.index
    queued = [task.args for task in index.pending()]
    assert queued == [("Docs/Scan.pdf",)] and index.pending()[0].name == "sync_note"
    assert extractor.cache.count() == 1 and read_progress(extractor.settings.extraction_cache_path) == []
    start = time.perf_counter()
    assert extractor.extract_document("Docs/Scan.pdf") == "cached"  # a second event reads nothing again
    assert time.perf_counter() - start < 1 and extractor.cache.count() == 1
    assert extractor.extract_document("Docs/Parti.pdf") == "gone"


def test_a_page_that_never_ends_is_given_up_within_the_stall_time(extractor: ExtractorHandlers) -> None:
    settings = extractor.settings
    file = settings.vault / "Docs/Scan.pdf"
    start = time.perf_counter()
    # A twentieth of a second without a page done: the child is still reading its first page (OCR: ≥ 0.3 s).
    extraction = extract_isolated(file, "pdf", settings, "Docs/Scan.pdf", "abc", stall_seconds=0.05)
    assert extraction.status == ExtractionStatus.FAILED and "no page read" in extraction.reason
    assert time.perf_counter() - start < 5
    assert ExtractionCache(settings.extraction_cache_path).under_way() == []
