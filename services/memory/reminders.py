"""Reminders asked for in plain words: parse, confirm back, save; due, snooze, done; the ``Rappels.md`` mirror.

"rappelle-moi dans 3 semaines de relancer Sophie" becomes a ``ReminderDraft`` (text "relancer Sophie",
due in 21 days at 09:00 local) whose ``confirmation`` the user accepts before ``save_reminder`` stores
it. A reminder snoozed ``FLAG_AFTER_SNOOZES`` times (``catalog.memory_models``) is flagged; a recurring
one done moves to its next occurrence. Nothing here reads the clock.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

from pydantic import BaseModel

from services.catalog import MemoryTable
from services.catalog.memory_models import Reminder, ReminderStatus
from services.language.moments import Unusable, next_occurrence, parse_when
from services.memory.managed import ManagedFile, managed_file

DEFAULT_SNOOZE = timedelta(days=1)
MIRROR = "assistant/Rappels.md"  # under obsirag/
_TRIGGER = re.compile(
    r"^\s*(?:(?:peux-tu\s+|pourrais-tu\s+|can\s+you\s+|please\s+)?(?:rappelle|rappeler)[-\s]?(?:moi|nous)"
    r"|fais[-\s]moi\s+penser|n'oublie\s+pas\s+de\s+me\s+rappeler|remind\s+(?:me|us)|rappel\s*:|reminder\s*:)\b\s*",
    re.IGNORECASE,
)
_CONNECTOR = re.compile(
    r"^(?:[,:;\-–]\s*)*(?:de\s+|d['’]\s*|du\s+|que\s+|qu['’]\s*|à\s+|a\s+|to\s+|that\s+|about\s+|of\s+)", re.I
)
_RECURRENCE_FR = {"daily": "chaque jour", "weekly": "chaque semaine", "monthly": "chaque mois"}
_RECURRENCE_EN = {"daily": "every day", "weekly": "every week", "monthly": "every month"}
_DAYS_FR = ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche")
_MONTHS_FR = (
    "janvier",
    "février",
    "mars",
    "avril",
    "mai",
    "juin",
    "juillet",
    "août",
    "septembre",
    "octobre",
    "novembre",
    "décembre",
)


class ReminderDraft(BaseModel):
    """A parsed request, shown back to the user before it is saved."""

    text: str
    due_at: datetime
    recurrence: str | None = None
    language: str = "fr"
    request: str = ""

    def confirmation(self) -> str:
        when = describe_moment(self.due_at, self.language)
        if self.language == "en":
            repeat = f" ({_RECURRENCE_EN[self.recurrence]})" if self.recurrence else ""
            return f"I will remind you {when}{repeat}: {self.text}. Shall I save it?"
        repeat = f" ({_RECURRENCE_FR[self.recurrence]})" if self.recurrence else ""
        return f"Je te le rappellerai {when}{repeat} : {self.text}. Je l'enregistre ?"


class MomentQuestion(BaseModel):
    """A request whose day does not exist or has passed: nothing is saved, ``question`` asks for another."""

    text: str
    reason: str  # "impossible" or "past"
    words: str = ""  # the impossible day as written ("le 31 février")
    moment: datetime | None = None  # the past moment
    language: str = "fr"

    def question(self) -> str:
        day = re.sub(r"^(?:le|the|on)\s+", "", self.words.strip(), flags=re.I)
        if self.language == "en":
            if self.moment is None:
                return f"There is no {day}: which day do you want this reminder (“{self.text}”) for?"
            when = describe_moment(self.moment, "en").removeprefix("on ")
            return f"{when} has already passed: when do you want this reminder (“{self.text}”) for?"
        if self.moment is None:
            return f"Le {day} n'existe pas : pour quel jour veux-tu ce rappel (« {self.text} ») ?"
        when = describe_moment(self.moment).removeprefix("le ")
        return f"Le {when} est déjà passé : pour quand veux-tu ce rappel (« {self.text} ») ?"


def is_reminder_request(text: str) -> bool:
    return _TRIGGER.match(text) is not None


def parse_reminder(text: str, now: datetime) -> ReminderDraft | MomentQuestion | None:
    """The draft a request asks for; a question when its day does not exist or has passed; None when it
    names no moment or leaves nothing to remind."""
    when = parse_when(text, now)
    if when is None:
        return None
    rest = _what(text, when.matched)
    if not rest:
        return None
    language = "en" if re.match(r"^\s*(?:can\s+you\s+|please\s+)?remind|^\s*reminder", text, re.I) else "fr"
    if isinstance(when, Unusable):
        return MomentQuestion(
            text=rest[:500], reason=when.reason, words=when.words, moment=when.moment, language=language
        )
    return ReminderDraft(text=rest[:500], due_at=when.due, recurrence=when.recurrence, language=language, request=text)


def _what(text: str, matched: tuple[str, ...]) -> str:
    """What to remind: ``text`` without its trigger, its moment's words and the connectors left over."""
    rest = _TRIGGER.sub("", text, count=1)
    for words in matched:
        rest = rest.replace(words.strip(), " ", 1)
    rest = re.sub(r"\s{2,}", " ", rest).strip(" ,;:.!")
    while (cut := _CONNECTOR.sub("", rest, count=1)) != rest:
        rest = cut.strip()
    return rest


def save_reminder(
    memory: MemoryTable, draft: ReminderDraft, now: datetime, source: str = "chat", source_ref: str = ""
) -> Reminder:
    reminder = Reminder(
        text=draft.text,
        due_at=draft.due_at,
        recurrence=draft.recurrence,
        source=source,
        source_ref=source_ref,
        created_at=now,
        updated_at=now,
    )
    return reminder.model_copy(update={"id": memory.insert_reminder(reminder)})


def due_reminders(memory: MemoryTable, now: datetime) -> list[Reminder]:
    return memory.reminders(ReminderStatus.ACTIVE, due_before=now)


def snooze(memory: MemoryTable, reminder_id: int, now: datetime, until: datetime | None = None) -> Reminder:
    reminder = _get(memory, reminder_id)
    updated = reminder.model_copy(
        update={
            "due_at": until or max(reminder.due_at, now) + DEFAULT_SNOOZE,
            "snoozes": reminder.snoozes + 1,
            "updated_at": now,
        }
    )
    memory.update_reminder(updated)
    return updated


def mark_done(memory: MemoryTable, reminder_id: int, now: datetime) -> Reminder:
    """Done: a one-off reminder ends; a recurring one moves to its next occurrence, snoozes forgotten."""
    reminder = _get(memory, reminder_id)
    if reminder.recurrence:
        changes = {"due_at": next_occurrence(reminder.due_at, reminder.recurrence, now), "snoozes": 0}
    else:
        changes = {"status": ReminderStatus.DONE, "done_at": now}
    updated = reminder.model_copy(update={**changes, "updated_at": now})
    memory.update_reminder(updated)
    return updated


def cancel(memory: MemoryTable, reminder_id: int, now: datetime) -> Reminder:
    updated = _get(memory, reminder_id).model_copy(update={"status": ReminderStatus.CANCELLED, "updated_at": now})
    memory.update_reminder(updated)
    return updated


def _get(memory: MemoryTable, reminder_id: int) -> Reminder:
    reminder = memory.get_reminder(reminder_id)
    if reminder is None:
        raise KeyError(f"no reminder {reminder_id}")
    return reminder


def describe_moment(moment: datetime, language: str = "fr") -> str:
    """ "le mardi 22 décembre 2026 à 09:00" / "on Tuesday 22 December 2026 at 09:00" (local time)."""
    local = moment.astimezone()
    if language == "en":
        return f"on {local:%A %d %B %Y} at {local:%H:%M}"
    return f"le {_DAYS_FR[local.weekday()]} {local.day} {_MONTHS_FR[local.month - 1]} {local.year} à {local:%H:%M}"


# --- the mirror ---------------------------------------------------------------------------------------

_TICKED = re.compile(r"^\s*[-*+]\s+\[[xX]\]\s.*\(rappel #(\d+)\)", re.M)


def reminder_line(reminder: Reminder) -> str:
    flag = f" ⚠ repoussé {reminder.snoozes} fois" if reminder.flagged else ""
    repeat = f", {_RECURRENCE_FR[reminder.recurrence]}" if reminder.recurrence else ""
    return f"- [ ] {reminder.text} — {describe_moment(reminder.due_at)}{repeat}{flag} (rappel #{reminder.id})"


def render_reminders(reminders: list[Reminder]) -> str:
    return "\n".join(reminder_line(r) for r in reminders) or "_Aucun rappel actif._"


def ticked_reminders(text: str) -> list[int]:
    """Ids of the reminders ticked ``- [x]`` in the mirror by hand: done."""
    return [int(found) for found in _TICKED.findall(text)]


def reminders_file(vault_root: Path) -> ManagedFile:
    return managed_file(vault_root, MIRROR, title="Rappels", note_type="profile")


def sync_reminders_mirror(memory: MemoryTable, vault_root: Path, now: datetime) -> list[int]:
    """Mark done what the user ticked in ``Rappels.md``, then rewrite its managed section; the ids done."""
    mirror = reminders_file(vault_root)
    done = [i for i in ticked_reminders(mirror.section("reminders") or "") if memory.get_reminder(i)]
    for reminder_id in done:
        mark_done(memory, reminder_id, now)
    active = memory.reminders(ReminderStatus.ACTIVE)
    if active or mirror.text() is not None:  # no file in the vault before the first reminder
        mirror.write({"reminders": render_reminders(active)})
    return done
