"""A clip written, then waited for until the running system indexed it: ``obsirag clip``, the artifacts page and
the MCP ``clip`` tool return a clip that is already searchable and citable (issue #36)."""

from __future__ import annotations

import time
from datetime import datetime

from services.catalog import Catalog
from services.catalog.models import NoteStatus
from services.clipping.clip import Clipped, clip_url
from services.config import Settings
from services.system.client import SystemClient

INDEX_WAIT_SECONDS = 120.0


def clip_and_index(settings: Settings, url: str, wait: float = INDEX_WAIT_SECONDS) -> tuple[Clipped, bool]:
    """The clip of ``url`` and whether the running system indexed it within ``wait`` seconds (``ClipError``)."""
    clipped = clip_url(settings, url.strip(), datetime.now().astimezone())
    return clipped, wait_indexed(settings, clipped.relative, wait)


def wait_indexed(settings: Settings, relative: str, wait: float = INDEX_WAIT_SECONDS) -> bool:
    """True once the catalog holds this version of the file, indexed; False at once when the system is down."""
    if not SystemClient(settings).running():
        return False
    mtime = (settings.vault / relative).stat().st_mtime
    catalog = Catalog(settings.catalog_path)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        record = catalog.get_note(relative)
        if record is not None and record.status == NoteStatus.INDEXED and abs(record.mtime - mtime) < 1e-3:
            return True
        time.sleep(0.2)  # the watcher's debounce, then the indexer's batch: the catalog says when it is done
    return False
