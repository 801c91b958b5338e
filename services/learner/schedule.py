"""When the learner works: active hours, cycle interval, reprocessing delay, the weekly synthesis slot.

Every function takes ``now`` (an aware datetime): nothing here reads the clock.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from services.catalog.models import LearnedNote
from services.config import Settings

LAST_RUN_KEY = "learner.last_run"
NEXT_RUN_KEY = "learner.next_run"
SYNTHESIS_WEEK_KEY = "learner.synthesis_week"  # the last week summarised, "2026-W48"
SYNTHESIS_SINCE_KEY = "learner.synthesis_since"  # first time the learner looked: no catch-up before it
_HOURS = re.compile(r"^\s*(\d{1,2})(?::00)?\s*-\s*(\d{1,2})(?::00)?\s*$")
_TIME = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*$")


@dataclass(frozen=True)
class ActiveHours:
    """Local hours ``[start, end)`` when a cycle may start; ``end < start`` spans midnight, ``0-24`` is always."""

    start: int
    end: int

    @classmethod
    def parse(cls, text: str) -> ActiveHours:
        match = _HOURS.match(text)
        if match is None or not (0 <= int(match[1]) <= 24 and 0 <= int(match[2]) <= 24):
            raise ValueError(f"active hours must look like 08-22, got {text!r}")
        return cls(int(match[1]) % 24, int(match[2]) if int(match[2]) == 24 else int(match[2]) % 24)

    def contains(self, now: datetime) -> bool:
        hour = now.astimezone().hour
        if self.start == self.end or (self.start == 0 and self.end == 24):
            return True
        if self.start < self.end:
            return self.start <= hour < self.end
        return hour >= self.start or hour < self.end


def learner_enabled(settings: Settings) -> bool:
    """``OBSIRAG_LEARN_ENABLED`` when set, else whether a model can run: an OpenAI-compatible URL, or mlx-lm."""
    if settings.learn_enabled is not None:
        return settings.learn_enabled
    if settings.llm_backend == "openai":
        return bool(settings.llm_base_url)
    return importlib.util.find_spec("mlx") is not None and importlib.util.find_spec("mlx_lm") is not None


def learner_off_reason(settings: Settings) -> str:
    """Why the learner does not run: ``"configuration"`` (``OBSIRAG_LEARN_ENABLED=false``), ``"no model"``,
    or ``""`` when it runs."""
    if learner_enabled(settings):
        return ""
    return "configuration" if settings.learn_enabled is False else "no model"


def cycle_due(settings: Settings, next_run: datetime | None, now: datetime) -> bool:
    """A cycle starts when the learner is enabled, ``now`` is within active hours and the next run is due."""
    if not learner_enabled(settings) or not ActiveHours.parse(settings.learn_active_hours).contains(now):
        return False
    return next_run is None or now >= next_run


def next_run_after(settings: Settings, finished: datetime) -> datetime:
    return finished + timedelta(minutes=settings.learn_interval_minutes)


def reprocess_wait(settings: Settings, learned: LearnedNote | None, now: datetime) -> timedelta | None:
    """How long before the note may be processed again, or None when it may be now."""
    if learned is None or learned.processed_at is None:
        return None
    ready = learned.processed_at + timedelta(days=settings.learn_min_reprocess_days)
    return ready - now if now < ready else None


# --- the weekly synthesis ---------------------------------------------------------------------------


@dataclass(frozen=True)
class WeekSlot:
    """One weekly synthesis: its label (ISO week), the slot time, and the week of changes it covers."""

    label: str
    slot: datetime
    start: datetime
    end: datetime


def parse_time(text: str) -> time:
    match = _TIME.match(text)
    if match is None or int(match[1]) > 23 or int(match[2]) > 59:
        raise ValueError(f"synthesis time must look like 20:00, got {text!r}")
    return time(int(match[1]), int(match[2]))


def latest_slot(settings: Settings, now: datetime) -> WeekSlot:
    """The most recent synthesis slot at or before ``now`` (local time), covering the 7 days before it."""
    local = now.astimezone()
    at = parse_time(settings.synthesis_time)
    days_back = (local.weekday() - settings.synthesis_weekday) % 7
    slot = datetime.combine(local.date() - timedelta(days=days_back), at, tzinfo=local.tzinfo)
    if slot > local:
        slot -= timedelta(days=7)
    start = slot - timedelta(days=7)
    middle = slot - timedelta(days=3, hours=12)  # labels the week the 7 days mostly belong to
    year, week, _ = middle.isocalendar()
    return WeekSlot(f"{year}-W{week:02d}", slot, start, slot)


def synthesis_due(settings: Settings, done_week: str | None, since: datetime | None, now: datetime) -> WeekSlot | None:
    """The slot to write now: the latest one, unless already written or older than the learner itself."""
    slot = latest_slot(settings, now)
    if done_week == slot.label or (since is not None and slot.slot < since):
        return None
    return slot
