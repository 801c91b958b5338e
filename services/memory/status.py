"""Where memory stands, for the dashboard and ``obsirag status``: the last consolidation, today's token use,
reminders due, facts waiting, the next consolidation and briefing."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from pydantic import BaseModel

from services.catalog import Catalog
from services.catalog.memory_models import FactStatus, ReminderStatus
from services.catalog.models import IndexRun
from services.config import Settings
from services.language.moments import parse_clock
from services.memory.briefing import LAST_DAY_KEY
from services.memory.consolidate import day_start
from services.memory.cycle import CONSOLIDATED_DAY_KEY


class MemoryStatus(BaseModel):
    last_consolidation: IndexRun | None = None
    tokens_today: int = 0
    token_budget: int = 0
    facts_confirmed: int = 0
    facts_pending: int = 0
    reminders_due: int = 0
    reminders_flagged: int = 0
    next_consolidation: datetime
    next_briefing: datetime
    last_briefing: str | None = None  # the day of the last briefing written

    def lines(self) -> list[str]:
        """What ``obsirag status`` prints."""
        run = self.last_consolidation
        last = (
            "never"
            if run is None
            else f"{run.started_at.astimezone():%Y-%m-%d %H:%M}"
            + (f" (error: {run.error})" if run.error else f", {run.counters.get('facts_added', 0)} added")
        )
        return [
            f"memory: {self.facts_confirmed} facts, {self.facts_pending} pending; last consolidation {last}; "
            f"tokens today {self.tokens_today}/{self.token_budget}",
            f"reminders: {self.reminders_due} due"
            + (f", {self.reminders_flagged} snoozed 3 times" if self.reminders_flagged else ""),
            f"next consolidation {self.next_consolidation.astimezone():%Y-%m-%d %H:%M}, "
            f"next briefing {self.next_briefing.astimezone():%Y-%m-%d %H:%M}",
        ]


def memory_status(settings: Settings, catalog: Catalog, now: datetime) -> MemoryStatus:
    active = catalog.reminders(ReminderStatus.ACTIVE)
    due = [r for r in active if r.is_due(now)]
    facts = catalog.active_facts()
    return MemoryStatus(
        last_consolidation=next((r for r in catalog.last_runs(50) if r.kind == "memory"), None),
        tokens_today=catalog.memory_tokens_since(day_start(now)),
        token_budget=settings.memory_daily_tokens,
        facts_confirmed=sum(f.status == FactStatus.CONFIRMED for f in facts),
        facts_pending=sum(f.status == FactStatus.PENDING for f in facts),
        reminders_due=len(due),
        reminders_flagged=sum(r.flagged for r in due),
        next_consolidation=_next_slot(settings.memory_consolidation_time, catalog.get_meta(CONSOLIDATED_DAY_KEY), now),
        next_briefing=_next_slot(settings.briefing_time, catalog.get_meta(LAST_DAY_KEY), now),
        last_briefing=catalog.get_meta(LAST_DAY_KEY),
    )


def _next_slot(clock: str, done_day: str | None, now: datetime) -> datetime:
    """The next daily slot at ``clock``: now when today's (or a missed one) is still to do."""
    local = now.astimezone()
    at: time = parse_clock(clock)
    today = datetime.combine(local.date(), at, tzinfo=local.tzinfo)
    latest = today if local >= today else today - timedelta(days=1)
    if done_day is None or date.fromisoformat(done_day) < latest.date():
        return local  # due now (the next tick does it)
    return today if local < today else today + timedelta(days=1)
