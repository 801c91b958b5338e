"""One memory cycle: consolidation when its daily slot is due, expiry, the two mirrors, the briefing.

The learner's periodic task calls ``run_memory``; ``obsirag memory`` commands and the tests call it with
their own ``now``. A missed slot (machine asleep, system down) is caught up at the next call. With a model
that cannot write (``writer_wait``), consolidation waits, said under ``WAITING_KEY``, and is not asked:
the bundled model would time out or write what it cannot; the mirrors and the briefing's data go on.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from services.catalog import Catalog
from services.config import Settings
from services.language.moments import parse_clock
from services.llm.capability import WriterWait, writer_wait
from services.llm.limits import CHARS_PER_TOKEN, PromptLimits, prompt_limits
from services.llm.models import WorkerState
from services.memory.briefing import Briefing, write_briefing
from services.memory.consolidate import SYSTEM, ConsolidationReport, consolidate
from services.memory.facts import Policy, expire_facts
from services.memory.llm import AskFn
from services.memory.profile import ProfileSync, sync_profile
from services.memory.reminders import sync_reminders_mirror

log = logging.getLogger(__name__)

CONSOLIDATED_DAY_KEY = "memory.consolidated_day"
FAILED_AT_KEY = "memory.failed_at"
WAITING_KEY = "memory.waiting"  # JSON: since when consolidation waits for a model that writes, and why
RETRY_AFTER = timedelta(minutes=30)  # a failed consolidation (the model down) is tried again, not every minute
SOURCE_FRAMING_TOKENS = 150  # the prompt's instructions and source labels around the sources' texts
MIN_SOURCE_CHARS = 500


def fitted(settings: Settings, limits: PromptLimits | None) -> Settings:
    """``settings`` with the sources' size cut to what the running worker reads within its target time to
    first token (its published budget): on a slow CPU a 6,000-character prompt would outlast the timeout."""
    if limits is None:
        return settings
    room = limits.prompt_tokens - limits.count(SYSTEM) - SOURCE_FRAMING_TOKENS
    chars = max(MIN_SOURCE_CHARS, int(room * CHARS_PER_TOKEN))
    if chars >= settings.memory_prompt_chars:
        return settings
    note_chars = min(settings.memory_note_chars, chars)
    return settings.model_copy(update={"memory_prompt_chars": chars, "memory_note_chars": note_chars})


@dataclass
class CycleReport:
    consolidation: ConsolidationReport | None = None
    expired: int = 0
    profile: ProfileSync = field(default_factory=ProfileSync)
    reminders_done: list[int] = field(default_factory=list)
    briefing: Briefing | None = None
    waiting: WriterWait | None = None  # consolidation was due, the model cannot write it


def consolidation_due(settings: Settings, catalog: Catalog, now: datetime) -> date | None:
    """The day whose consolidation slot has passed without a run (today's, else yesterday's: caught up)."""
    local = now.astimezone()
    at = parse_clock(settings.memory_consolidation_time, "OBSIRAG_MEMORY_CONSOLIDATION_TIME")
    day = local.date() if local.time() >= at else local.date() - timedelta(days=1)
    done = catalog.get_meta(CONSOLIDATED_DAY_KEY)
    return None if done is not None and date.fromisoformat(done) >= day else day


def run_memory(
    settings: Settings,
    catalog: Catalog,
    ask: AskFn | None,
    now: datetime,
    consolidate_now: bool = False,
    wait: WriterWait | None = None,
) -> CycleReport:
    """Consolidate (when due, or ``consolidate_now``, and a model can run; recorded as waiting instead when
    ``wait`` says the model cannot write), then expire, mirror and brief (without the model's questions)."""
    report = CycleReport()
    day = consolidation_due(settings, catalog, now)
    if ask is not None and (consolidate_now or (day is not None and not _failed_lately(catalog, now))):
        if wait is not None:
            report.waiting = wait
            record_wait(catalog, wait, now)
        else:
            record_wait(catalog, None, now)
            _consolidate(settings, catalog, ask, now, day, report)
    report.expired = expire_facts(catalog, now)
    report.profile = sync_profile(catalog, settings.vault, Policy.from_settings(settings), now)
    report.reminders_done = sync_reminders_mirror(catalog, settings.vault, now)
    report.briefing = write_briefing(settings, catalog, None if wait else ask, now)
    return report


def _consolidate(
    settings: Settings, catalog: Catalog, ask: AskFn, now: datetime, day: date | None, report: CycleReport
) -> None:
    report.consolidation = consolidate(settings, catalog, ask, now)
    error = report.consolidation.error
    if day is not None and (error is None or error.startswith("budget")):  # over budget: tomorrow
        catalog.set_meta(CONSOLIDATED_DAY_KEY, day.isoformat())
    elif error is not None:
        catalog.set_meta(FAILED_AT_KEY, now.isoformat())


def record_wait(catalog: Catalog, wait: WriterWait | None, now: datetime) -> None:
    """Say (or stop saying, ``wait`` None) that consolidation waits; the first tick's time is kept."""
    stored = waiting_since(catalog)
    if wait is None:
        if stored is not None:
            catalog.set_meta(WAITING_KEY, "")
        return
    if stored is None or stored[1] != wait:
        since = stored[0] if stored is not None else now
        catalog.set_meta(WAITING_KEY, json.dumps({"since": since.isoformat(), **wait.model_dump()}))


def waiting_since(catalog: Catalog) -> tuple[datetime, WriterWait] | None:
    """Since when and why consolidation waits for a model that writes; None when it does not wait."""
    stored = catalog.get_meta(WAITING_KEY)
    if not stored:
        return None
    data = json.loads(stored)
    return datetime.fromisoformat(data.pop("since")), WriterWait.model_validate(data)


def _failed_lately(catalog: Catalog, now: datetime) -> bool:
    failed = catalog.get_meta(FAILED_AT_KEY)
    return failed is not None and now - datetime.fromisoformat(failed) < RETRY_AFTER


class MemoryTicker:
    """The learner's minute tick for memory: ``run_memory`` with this process's model, one at a time.

    ``ask`` is None when no model can run here: mirrors and the briefing's deterministic parts go on.
    ``state`` reads the running worker's published state at each tick: its prompt budget, and whether its
    model writes. A failure is logged and reported, never raised into the consumer.
    """

    def __init__(
        self,
        settings: Settings,
        catalog: Catalog,
        ask: AskFn | None,
        state: Callable[[], WorkerState | None] | None = None,
    ) -> None:
        self.settings = settings
        self.catalog = catalog
        self.ask = ask
        self.state = state
        self._lock = threading.Lock()

    def tick(self, now: datetime) -> dict[str, object]:
        if not self._lock.acquire(blocking=False):
            return {"busy": True}
        try:
            state = self.state() if self.state and self.ask else None
            limits = prompt_limits(self.settings, state) if self.state and self.ask else None
            wait = writer_wait(self.settings, state) if self.ask else None
            report = run_memory(fitted(self.settings, limits), self.catalog, self.ask, now, wait=wait)
        except Exception as exc:  # a broken vault file, a full disk: the next tick tries again
            log.warning("memory tick failed: %s", exc)
            return {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            self._lock.release()
        return summary(report)


def summary(report: CycleReport) -> dict[str, object]:
    consolidation = report.consolidation
    return {
        "consolidation": None if consolidation is None else {**consolidation.counters(), "error": consolidation.error},
        "waiting": report.waiting.text("en") if report.waiting else None,  # the CLI speaks English
        "expired": report.expired,
        "profile": {
            "imported": report.profile.imported,
            "forgotten": report.profile.forgotten,
            "written": report.profile.written,
        },
        "reminders_done": report.reminders_done,
        "briefing": report.briefing.path if report.briefing else None,
    }
