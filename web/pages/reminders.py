"""Reminders: the active ones, due first, with done and snooze; the header's counter of those due now."""

from __future__ import annotations

from litestar import Controller, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from litestar.response import Template

from services.catalog.memory_models import Reminder, ReminderStatus
from services.memory.reminders import mark_done, snooze
from services.memory.status import marker_problems
from web.handlers import page
from web.site import SiteDep


class RemindersController(Controller):
    path = "/reminders"

    @page("/", sync_to_thread=True)
    def index(self, site: SiteDep) -> Template:
        now = site.clock()
        active = site.catalog.reminders(ReminderStatus.ACTIVE)
        context = {
            "active": "reminders",
            "now": now,
            "due": [r for r in active if r.is_due(now)],
            "later": [r for r in active if not r.is_due(now)],
            "marker_problems": marker_problems(site.settings.vault),
        }
        return Template("reminders.html", context=context)

    @page("/badge", sync_to_thread=True)
    def badge(self, site: SiteDep) -> Template:
        """The header's counter (htmx, refreshed every minute)."""
        due = len(site.catalog.reminders(ReminderStatus.ACTIVE, due_before=site.clock()))
        return Template("_reminders_badge.html", context={"due": due})

    @post("/{reminder_id:int}/done", sync_to_thread=True)
    def done(self, site: SiteDep, reminder_id: FromPath[int]) -> Template:
        reminder = _act(site, reminder_id, mark_done)
        return Template("_reminder.html", context={"reminder": reminder, "now": site.clock()})

    @post("/{reminder_id:int}/snooze", sync_to_thread=True)
    def snooze(self, site: SiteDep, reminder_id: FromPath[int]) -> Template:
        reminder = _act(site, reminder_id, snooze)
        return Template("_reminder.html", context={"reminder": reminder, "now": site.clock()})


def _act(site: SiteDep, reminder_id: int, action: object) -> Reminder:
    try:
        return action(site.catalog, reminder_id, site.clock())  # type: ignore[operator,no-any-return]
    except KeyError:
        raise NotFoundException() from None
