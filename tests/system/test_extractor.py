"""The extract worker's task against a real Redis: a document read once, in a child process, then indexed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from services.attachments.cache import ExtractionCache, read_progress
from services.attachments.isolated import extract_isolated
from services.attachments.models import Extraction, ExtractionStatus
from services.config import Settings
from services.system.handlers.extractor import ExtractorHandlers
from services.system.queues import Queues
from tests.support import documents as docs
from tests.support.document_fixtures import SCAN
from tests.support.system import wait_until


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


def test_a_restarted_extractor_takes_back_the_document_a_killed_one_was_reading(extractor: ExtractorHandlers) -> None:
    """Its task was taken off the queue: only the reconcile (minutes away) queued it again before."""
    extractor.cache.start("Docs/Scan.pdf", "abc")  # what a killed extractor leaves: the file shown being read
    assert extractor.take_back() == ["Docs/Scan.pdf"]
    queued = extractor.queues.hueys["extract"].pending()
    assert [(task.name, task.args) for task in queued] == [("extract_document", ("Docs/Scan.pdf",))]
    assert extractor.cache.under_way() == [] and extractor.take_back() == []
    assert extractor.extract_document("Docs/Scan.pdf") == "ok"  # nothing left marks it as read elsewhere


def readers() -> list[psutil.Process]:
    """This process's document readers: the children of its fork server (not their Tesseract)."""
    servers = [p for p in psutil.Process().children() if "forkserver" in " ".join(safe_cmdline(p))]
    return [reader for server in servers for reader in server.children()]


def safe_cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def test_a_reader_killed_from_outside_is_read_again_not_recorded_failed(extractor: ExtractorHandlers) -> None:
    settings = extractor.settings
    file = settings.vault / "Docs/Scan.pdf"
    result: list[Extraction] = []
    reading = threading.Thread(
        target=lambda: result.append(extract_isolated(file, "pdf", settings, "Docs/Scan.pdf", "h"))
    )
    reading.start()
    [victim] = wait_until(readers, "the reader started", timeout=30)
    victim.kill()  # kill -9, as a user or the chaos check does
    reading.join(60)
    assert result[0].status == ExtractionStatus.OK and result[0].pages


EXTRACTOR = """
import sys
from pathlib import Path
from services.attachments.isolated import extract_isolated
from services.config import Settings
settings = Settings(vault=Path(sys.argv[1]), data_dir=Path(sys.argv[2]))
extract_isolated(Path(sys.argv[1]) / "Docs/Long.pdf", "pdf", settings, "Docs/Long.pdf", "h")
"""


def test_the_reader_and_its_ocr_die_with_a_killed_extractor(extractor: ExtractorHandlers) -> None:
    settings = extractor.settings
    docs.scanned_pdf(settings.vault / "Docs/Long.pdf", [SCAN] * 12, crop=True)  # seconds of OCR left to run
    root = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-c", EXTRACTOR, str(settings.vault), str(settings.data_dir)]
    process = subprocess.Popen(command, cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    try:
        progress = lambda: read_progress(settings.extraction_cache_path)  # noqa: E731
        wait_until(progress, "the reading under way", timeout=60)
        # Fork server, reader, Tesseract: the progress is recorded just before the reader is forked (once, in CI,
        # only the fork server was there yet).
        family = wait_until(lambda: _family(process.pid), "the fork server and its reader", timeout=30)
        process.kill()
        process.wait()
        # At once: before, the reader read on to the last page (and its Tesseract ran its page out).
        wait_until(lambda: not [p for p in family if alive(p)], "the reader and its OCR gone", timeout=1.5)
    finally:
        process.kill()


def _family(pid: int) -> list[psutil.Process] | None:
    found = psutil.Process(pid).children(recursive=True)
    return found if len(found) >= 2 else None


def alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
