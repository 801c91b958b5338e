"""How far the indexing of what the last reconcile found has gone, and when it ends (issue #34): the first
index of a vault, or a vault changed while ObsiRAG was off. The watcher publishes what its last reconcile
found (``last_reconcile``: when, how many paths); the catalog says how many of them the indexer has written
since (indexed, skipped or failed); the rate is that count over the time since the reconcile, so the ETA
steadies as the work goes. Documents waiting for their text count as written once the indexer has seen them:
their reading has its own line (``ExtractionBacklog``)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel

from services.catalog import Catalog
from services.config import Settings
from services.language.durations import short_duration


class SyncProgress(BaseModel):
    changed: int  # paths the last reconcile found to sync
    done: int  # of them, written to the catalog since
    notes_per_s: float | None = None
    eta_seconds: float | None = None

    def line(self, lang: Literal["fr", "en"] = "en") -> str:
        share = self.done / self.changed if self.changed else 1.0
        rate = f"{self.notes_per_s:.1f}" if self.notes_per_s else "…"
        eta = short_duration(self.eta_seconds) if self.eta_seconds is not None else "…"
        if lang == "fr":
            rate = rate.replace(".", ",")
            return f"indexation : {self.done}/{self.changed} notes ({share:.0%}), {rate} notes/s, fin dans {eta}"
        return f"indexing: {self.done}/{self.changed} notes ({share:.0%}), {rate} notes/s, done in {eta}"


def sync_progress(settings: Settings, watcher: dict[str, Any] | None, now: float | None = None) -> SyncProgress | None:
    """The sync under way after the watcher's last reconcile (its heartbeat ``details``); None when it is
    done, or nothing was found to sync."""
    last = (watcher or {}).get("last_reconcile") or {}
    changed, at = int(last.get("changed") or 0), last.get("at")
    if not changed or at is None or not settings.catalog_path.exists():
        return None
    catalog = Catalog(settings.catalog_path)
    try:
        done = min(changed, catalog.notes.written_since(datetime.fromtimestamp(float(at), UTC)))
    finally:
        catalog.close()
    if done >= changed:
        return None
    elapsed = (time.time() if now is None else now) - float(at)
    rate = done / elapsed if done and elapsed > 0 else None
    eta = (changed - done) / rate if rate else None
    return SyncProgress(changed=changed, done=done, notes_per_s=rate, eta_seconds=eta)
