"""How far the learner is through the vault: notes it processed, those it never looked at, and when it
should be done at its pace (the dashboard's learner panel)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from services.catalog import Catalog
from services.config import Settings
from services.learner.schedule import learner_off_reason
from services.llm.capability import WriterWait


class LearnerProgress(BaseModel):
    enabled: bool  # as the running learner said in its heartbeat
    off_reason: str  # ``schedule.learner_off_reason``: "" when it may run
    web_search: bool
    processed: int
    outcomes: dict[str, int]  # processed notes by outcome ("processed", "skipped"…)
    remaining: int  # indexed notes the learner never looked at
    eta_seconds: float  # until ``remaining`` are done, one cycle per interval; 0 when none remain
    next_run: datetime | None
    last_run: datetime | None
    waiting: str | None = None  # why insights and synapse texts wait for a model that writes


def learner_progress(settings: Settings, catalog: Catalog, details: Mapping[str, Any]) -> LearnerProgress:
    """The learner's progress from the catalog; ``details``: its heartbeat's (``enabled``, ``next_run``…)."""
    remaining, outcomes = catalog.learner.progress_counts()
    return LearnerProgress(
        enabled=bool(details.get("enabled")),
        off_reason=learner_off_reason(settings),
        web_search=settings.learn_web_search,
        processed=sum(outcomes.values()),
        outcomes=dict(outcomes),
        remaining=remaining,
        eta_seconds=eta_seconds(settings, remaining),
        next_run=_moment(details.get("next_run")),
        last_run=_moment(details.get("last_run")),
        waiting=WriterWait.model_validate(details["waiting"]).text() if details.get("waiting") else None,
    )


def eta_seconds(settings: Settings, remaining: int) -> float:
    """Each cycle takes up to ``learn_fullscan_per_run`` never-processed notes, one cycle per interval."""
    cycles = math.ceil(remaining / max(1, settings.learn_fullscan_per_run))
    return cycles * settings.learn_interval_minutes * 60 if remaining else 0


def _moment(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None
