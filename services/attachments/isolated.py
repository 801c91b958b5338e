"""Extraction in a child process, so that a bad document cannot take the worker down with it.

The child runs under a memory limit (``RLIMIT_AS``) and reports each page to the extraction cache; the
parent kills it when no page has been done for ``stall_seconds`` (a page that never ends) and records
the file ``failed`` with the reason. A crash inside PDFium or an image decoder is one file's failure too.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import time
from multiprocessing.connection import Connection
from pathlib import Path

from services.attachments import ocr
from services.attachments.cache import ExtractionCache
from services.attachments.extract import extract_document
from services.attachments.models import Extraction, ExtractionStatus
from services.config import Settings

MEMORY_LIMIT = 2 * 1024**3  # address space of the child: far above a 200-dpi page, far below the machine


def extract_isolated(
    file: Path, kind: str, settings: Settings, path: str, content_hash: str, stall_seconds: float | None = None
) -> Extraction:
    """``extract_document`` in a child process; progress goes to ``settings.extraction_cache_path``."""
    stall = stall_seconds or settings.ocr_page_seconds * 2
    context = _context()
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(sender, file, kind, settings, path), daemon=True)
    cache = ExtractionCache(settings.extraction_cache_path)
    cache.start(path, content_hash)
    child.start()
    sender.close()
    try:
        return _wait(child, receiver, cache, path, kind, stall)
    finally:
        cache.finish(path)
        cache.close()
        if child.is_alive():
            child.kill()
        child.join(5)


def _context() -> multiprocessing.context.BaseContext:
    """A fork server (never fork a process that runs threads, Huey's): it starts once per process with the
    readers imported, then each document's child forks from it in milliseconds (a spawn cost ~1-3 s here)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return context


def _wait(child, receiver: Connection, cache: ExtractionCache, path: str, kind: str, stall: float) -> Extraction:
    last_done, last_change = -1, time.monotonic()
    while True:
        if receiver.poll(min(0.2, stall / 2)):  # a short stall is checked as often as it asks
            try:
                return Extraction.model_validate_json(receiver.recv())
            except EOFError:
                break  # the child died before it answered
        if not child.is_alive() and not receiver.poll(0):
            break
        done = next((p.done for p in cache.under_way() if p.path == path), 0)
        if done != last_done:
            last_done, last_change = done, time.monotonic()
        elif time.monotonic() - last_change > stall:
            child.kill()
            reason = f"unreadable document: no page read in {stall:.0f} s (page {done + 1}), given up"
            return Extraction(kind=kind, status=ExtractionStatus.FAILED, reason=reason)
    child.join(5)
    code = child.exitcode
    reason = f"unreadable document: the reader crashed (exit code {code}; out of memory or a damaged file)"
    return Extraction(kind=kind, status=ExtractionStatus.FAILED, reason=reason)


def _child(sender: Connection, file: Path, kind: str, settings: Settings, path: str) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    os.environ.update(ocr.ONE_THREAD)  # this process only reads documents: Tesseract on one core
    cache = ExtractionCache(settings.extraction_cache_path)
    extraction = extract_document(file, kind, settings, lambda done, total: cache.advance(path, done, total))
    sender.send(extraction.model_dump_json())
    sender.close()
