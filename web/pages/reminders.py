"""Reminders: the active ones, due first, with done and snooze; the header's counter of those due now."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from litestar.response import Template

from services.catalog import MemoryTable
from services.catalog.memory_models import Reminder, ReminderStatus
from services.config import Settings
from services.memory.reminders import mark_done, snooze
from services.memory.status import marker_problems
from web.dependencies import Clock
from web.page_route import page

ReminderAction = Callable[[MemoryTable, int, datetime], Reminder]  # ``mark_done``, ``snooze``


class RemindersController(Controller):
    path = "/reminders"

    @page("/", sync_to_thread=True)
    def index(
        self, memory: NamedDependency[MemoryTable], clock: NamedDependency[Clock], settings: NamedDependency[Settings]
    ) -> Template:
        now = clock()
        active = memory.reminders(ReminderStatus.ACTIVE)
        context = {
            "active": "reminders",
            "now": now,
            "due": [r for r in active if r.is_due(now)],
            "later": [r for r in active if not r.is_due(now)],
            "marker_problems": marker_problems(settings.vault),
        }
        return Template("reminders.html", context=context)

    @page("/badge", sync_to_thread=True)
    def badge(self, memory: NamedDependency[MemoryTable], clock: NamedDependency[Clock]) -> Template:
        """The header's counter (htmx, refreshed every minute)."""
        due = len(memory.reminders(ReminderStatus.ACTIVE, due_before=clock()))
        return Template("_reminders_badge.html", context={"due": due})

    @post("/{reminder_id:int}/done", sync_to_thread=True)
    def done(
        self, memory: NamedDependency[MemoryTable], clock: NamedDependency[Clock], reminder_id: FromPath[int]
    ) -> Template:
        reminder = _act(memory, reminder_id, clock(), mark_done)
        return Template("_reminder.html", context={"reminder": reminder, "now": clock()})

    @post("/{reminder_id:int}/snooze", sync_to_thread=True)
    def snooze(
        self, memory: NamedDependency[MemoryTable], clock: NamedDependency[Clock], reminder_id: FromPath[int]
    ) -> Template:
        reminder = _act(memory, reminder_id, clock(), snooze)
        return Template("_reminder.html", context={"reminder": reminder, "now": clock()})


def _act(memory: MemoryTable, reminder_id: int, now: datetime, action: ReminderAction) -> Reminder:
    try:
        return action(memory, reminder_id, now)
    except KeyError:
        raise NotFoundException() from None
