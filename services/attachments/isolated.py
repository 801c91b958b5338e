"""Extraction in a child process, so that a bad document cannot take the worker down with it.

The child runs under a memory limit (``RLIMIT_AS``) and reports each page to the extraction cache; the
parent kills it when no page has been done for ``stall_seconds`` (a page that never ends) and records
the file ``failed`` with the reason. A crash inside PDFium or an image decoder is one file's failure too.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import resource
import signal
import time
from multiprocessing.connection import Connection
from pathlib import Path

from services.attachments import ocr
from services.attachments.cache import ExtractionCache
from services.attachments.extract import extract_document
from services.attachments.models import Extraction, ExtractionStatus
from services.config import Settings
from services.lifeline import watch_process

log = logging.getLogger(__name__)
MEMORY_LIMIT = 2 * 1024**3  # address space of the child: far above a 200-dpi page, far below the machine
KILLED_ATTEMPTS = 3  # a reader killed from outside (kill -9, the OOM killer) is tried this often in all


def extract_isolated(
    file: Path, kind: str, settings: Settings, path: str, content_hash: str, stall_seconds: float | None = None
) -> Extraction:
    """``extract_document`` in a child process; progress goes to ``settings.extraction_cache_path``.

    A reader that a SIGKILL ended is no verdict on the file (someone killed it, or the machine ran out of
    memory): it is read again, and recorded failed only when that keeps happening."""
    for attempt in range(1, KILLED_ATTEMPTS + 1):
        extraction, killed = _read_once(file, kind, settings, path, content_hash, stall_seconds)
        if not killed or attempt == KILLED_ATTEMPTS:
            return extraction
        log.warning(
            "le lecteur de %s a été tué (SIGKILL) : nouvelle lecture (%d/%d)", path, attempt + 1, KILLED_ATTEMPTS
        )
    raise AssertionError("unreachable")


def _read_once(
    file: Path, kind: str, settings: Settings, path: str, content_hash: str, stall_seconds: float | None
) -> tuple[Extraction, bool]:
    """One reading in a child; whether the child was ended by a SIGKILL not sent by this process."""
    stall = stall_seconds or settings.ocr_page_seconds * 2
    context = _context()
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(sender, file, kind, settings, path, os.getpid()), daemon=True)
    cache = ExtractionCache(settings.extraction_cache_path)
    cache.start(path, content_hash)
    child.start()
    sender.close()
    try:
        extraction, crashed = _wait(child, receiver, cache, path, kind, stall)
        return extraction, crashed and child.exitcode == -signal.SIGKILL
    finally:
        cache.finish(path)
        cache.close()
        _kill_group(child)
        child.join(5)


def _kill_group(child: multiprocessing.process.BaseProcess) -> None:
    """The reader and its OCR programs (its own process group), when it still runs."""
    if child.pid is None or not child.is_alive():
        return
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # not yet the leader of its group
        child.kill()


def _context() -> multiprocessing.context.BaseContext:
    """A fork server (never fork a process that runs threads, Huey's): it starts once per process with the
    readers imported, then each document's child forks from it in milliseconds (a spawn cost ~1-3 s here)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return context


def _wait(
    child, receiver: Connection, cache: ExtractionCache, path: str, kind: str, stall: float
) -> tuple[Extraction, bool]:
    """The child's extraction, or why there is none; whether the child crashed (died without answering)."""
    last_done, last_change = -1, time.monotonic()
    while True:
        if receiver.poll(min(0.2, stall / 2)):  # a short stall is checked as often as it asks
            try:
                return Extraction.model_validate_json(receiver.recv()), False
            except EOFError:
                break  # the child died before it answered
        if not child.is_alive() and not receiver.poll(0):
            break
        done = next((p.done for p in cache.under_way() if p.path == path), 0)
        if done != last_done:
            last_done, last_change = done, time.monotonic()
        elif time.monotonic() - last_change > stall:
            _kill_group(child)
            child.join(5)
            reason = f"unreadable document: no page read in {stall:.0f} s (page {done + 1}), given up"
            return Extraction(kind=kind, status=ExtractionStatus.FAILED, reason=reason), False
    child.join(5)
    code = child.exitcode
    reason = f"unreadable document: the reader crashed (exit code {code}; out of memory or a damaged file)"
    return Extraction(kind=kind, status=ExtractionStatus.FAILED, reason=reason), True


def _child(sender: Connection, file: Path, kind: str, settings: Settings, path: str, reader: int) -> None:
    _die_with(reader)
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    os.environ.update(ocr.ONE_THREAD)  # this process only reads documents: Tesseract on one core
    cache = ExtractionCache(settings.extraction_cache_path)
    extraction = extract_document(file, kind, settings, lambda done, total: cache.advance(path, done, total))
    sender.send(extraction.model_dump_json())
    sender.close()


def _die_with(reader: int) -> None:
    """This child and its Tesseract processes (one group) end with ``reader``, the process that waits for
    them (the extractor). Its fork server is their parent, and lives as long as they do (each child holds
    the fork server's lifeline): the kernel's signal would never come, so the reader's pid is watched."""
    os.setpgrp()

    def end_group(*_args: object) -> None:
        with contextlib.suppress(OSError):
            os.killpg(0, signal.SIGKILL)

    signal.signal(signal.SIGTERM, end_group)
    watch_process(reader, end_group, poll=0.1)
