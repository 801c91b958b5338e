"""The daily briefing ``obsirag/briefings/YYYY-MM-DD.md``: what today holds, each line with its source.

Sections: the connected calendars' events of the day, reminders due today (and overdue), notes changed
yesterday, unchecked ``- [ ]`` tasks older
than ``briefing_task_days``, facts waiting for validation, and two to four open questions about recent
notes. Everything but the questions is deterministic and written even when no model can run. A
briefing is created once (exclusive create) and never rewritten: an edited or deleted briefing is left
alone. A morning missed (machine asleep, system down) is caught up at the next run.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path

from services import vault
from services.catalog import Catalog
from services.catalog.memory_models import Fact, FactStatus, Reminder, ReminderStatus
from services.config import Settings
from services.connectors.agenda import DayEvent, events_on
from services.language.moments import parse_clock
from services.llm.redact import redact_text
from services.memory.consolidate import parse_reply
from services.memory.llm import AskFn
from services.memory.sources import user_note_times
from services.vault.artifacts import (
    GENERATED_ROOT,
    create_artifact,
    generated_path,
    render_frontmatter,
    wikilink,
)
from services.vault.models import ParsedNote

log = logging.getLogger(__name__)
_Task = tuple[str, ParsedNote, date]  # the task's text, its note, since when it is open

FOLDER = "briefings"
LAST_DAY_KEY = "briefing.last_day"
MAX_LINES = 15  # per section
QUESTION_NOTES = 6
QUESTION_NOTE_CHARS = 500
QUESTION_TOKENS = 300
_TASK = re.compile(r"^\s*(?:>\s*)*[-*+]\s+\[ \]\s+(?P<text>\S.*)$")
_TASK_DATE = re.compile(r"(?:➕|\[created::)\s*(\d{4}-\d{2}-\d{2})")
QUESTIONS_SYSTEM = (
    "Tu aides une personne à réfléchir à ses notes récentes. Pose deux à quatre questions ouvertes, courtes, "
    'chacune sur une note citée. Réponds UNIQUEMENT par du JSON : {"questions": [{"question": "… ?", '
    '"source": "N1"}]}.'
)


@dataclass
class Briefing:
    day: date
    reminders: list[Reminder] = field(default_factory=list)
    changed: list[ParsedNote] = field(default_factory=list)
    tasks: list[_Task] = field(default_factory=list)  # text, note, since
    more_tasks: int = 0  # old tasks past MAX_LINES, counted so the briefing says they exist
    pending: list[Fact] = field(default_factory=list)
    questions: list[tuple[str, ParsedNote]] = field(default_factory=list)
    no_questions: str = ""  # why there are none
    cards_due: int = 0  # flashcards due by the end of the day (issue #36)
    events: list[DayEvent] = field(default_factory=list)  # the connected calendars' events of the day (#37)
    path: str = ""
    recent: list[ParsedNote] = field(default_factory=list)  # the newest of the week, for the questions


def briefing_due(settings: Settings, catalog: Catalog, now: datetime) -> date | None:
    """The day whose briefing should exist by now and does not yet: today after the briefing time, else
    yesterday (so a missed morning is caught up); None when it was written already."""
    local = now.astimezone()
    at = parse_clock(settings.briefing_time, "OBSIRAG_BRIEFING_TIME")
    day = local.date() if local.time() >= at else local.date() - timedelta(days=1)
    last = catalog.get_meta(LAST_DAY_KEY)
    if last is not None and date.fromisoformat(last) >= day:
        return None
    return day


def write_briefing(settings: Settings, catalog: Catalog, ask: AskFn | None, now: datetime) -> Briefing | None:
    """Write the due briefing (None when none is due); the questions need ``ask``, the rest does not."""
    day = briefing_due(settings, catalog, now)
    if day is None:
        return None
    briefing = gather(settings, catalog, day, now)
    _ask_questions(settings, briefing, ask)
    relative = f"{FOLDER}/{day.isoformat()}.md"
    if create_artifact(settings.vault, relative, render(briefing, now)) is not None:
        catalog.record_artifact(f"{GENERATED_ROOT}/{relative}", "briefing", None, [], now)
    briefing.path = f"{GENERATED_ROOT}/{relative}"  # an existing file (written, then edited) stays as it is
    catalog.set_meta(LAST_DAY_KEY, day.isoformat())
    return briefing


def gather(settings: Settings, catalog: Catalog, day: date, now: datetime) -> Briefing:
    """The deterministic parts of ``day``'s briefing, and the recent notes its questions are about."""
    tz = now.astimezone().tzinfo
    start = datetime.combine(day, time(), tzinfo=tz)
    files = user_note_times(settings)  # nothing parsed: holding a 50,000-note vault parsed took 1.8 GB (#34)
    yesterday = start - timedelta(days=1)
    changed = sorted(path for path, mtime in files if yesterday.timestamp() <= mtime < start.timestamp())
    week = datetime.combine(day - timedelta(days=7), time()).astimezone().timestamp()
    recent = [path for path, mtime in sorted(files, key=lambda f: -f[1]) if mtime >= week]
    tasks, more_tasks = _oldest_tasks(settings, [path for path, _ in files], day)
    return Briefing(
        day=day,
        reminders=catalog.reminders(ReminderStatus.ACTIVE, due_before=start + timedelta(days=1))[:MAX_LINES],
        changed=_read_first(settings, changed, MAX_LINES),
        tasks=tasks,
        more_tasks=more_tasks,
        pending=catalog.facts([FactStatus.PENDING], limit=MAX_LINES),
        cards_due=len(catalog.cards(due_before=start + timedelta(days=1))),
        events=events_on(settings, day),
        recent=_read_first(settings, recent, QUESTION_NOTES),
    )


def _read_first(settings: Settings, paths: list[str], count: int) -> list[ParsedNote]:
    """The first ``count`` of ``paths`` that read as notes."""
    notes = (vault.read_note_if_readable(settings.vault, path, settings.max_file_bytes) for path in paths)
    return list(itertools.islice((note for note in notes if note is not None), count))


def _oldest_tasks(settings: Settings, paths: list[str], day: date) -> tuple[list[_Task], int]:
    """``old_tasks`` over every note, keeping only the ``MAX_LINES`` oldest (and how many more there are)
    in memory; only the notes whose bytes hold an open box are parsed."""
    total = 0

    def every_task() -> Iterator[_Task]:
        nonlocal total
        for path in paths:
            note = vault.read_note_if_readable(settings.vault, path, settings.max_file_bytes, _may_hold_task)
            for task in old_tasks([note] if note else [], day, settings.briefing_task_days):
                total += 1
                yield task

    oldest = heapq.nsmallest(MAX_LINES, every_task(), key=lambda task: (task[2], task[1].path))  # stable
    return oldest, total - len(oldest)


def _may_hold_task(raw: bytes) -> bool:
    # "[ ]" in the bytes of UTF-8 and of the 8-bit encodings; UTF-16 or -32 (NUL bytes) are parsed to know.
    return b"[ ]" in raw or b"\x00" in raw


def old_tasks(notes: Iterable[ParsedNote], day: date, older_than_days: int) -> list[_Task]:
    """Unchecked tasks whose date (their own ``➕ YYYY-MM-DD``, else the note's date) is at least
    ``older_than_days`` before ``day``; oldest first. The note's date is the one it declares
    (``updated``, else ``created``/``date``), its file's time only without one: a clone, a copy or a sync
    gives every file today's time, which would hide every old task."""
    limit = day - timedelta(days=older_than_days)
    found = []
    for note in notes:
        touched = note.modified.astimezone().date()
        doc = note.markdown  # the project's one Markdown reader (the read's parse): code blocks hold no task
        for line, code in zip(doc.lines, doc.code_lines, strict=True):
            if code or _TASK.match(line) is None:
                continue
            own = _TASK_DATE.search(line)
            since = date.fromisoformat(own[1]) if own else touched
            if since <= limit:
                found.append((_TASK.match(line)["text"].strip(), note, since))  # type: ignore[index]
    return sorted(found, key=lambda item: (item[2], item[1].path))


def _ask_questions(settings: Settings, briefing: Briefing, ask: AskFn | None) -> None:
    recent = briefing.recent
    if ask is None:
        briefing.no_questions = "aucun modèle ne peut tourner ici"
        return
    if not recent:
        briefing.no_questions = "aucune note récente"
        return
    labels = {f"N{i}": note for i, note in enumerate(recent, start=1)}
    prompt = "\n\n".join(
        f"[{label}] {note.title}\n{redact_text(' '.join(note.body.split())[:QUESTION_NOTE_CHARS])}"
        for label, note in labels.items()
    )
    try:
        reply = ask(QUESTIONS_SYSTEM, prompt, QUESTION_TOKENS)
    except Exception as exc:  # the deterministic parts are written whatever the model does
        log.warning("briefing questions failed: %s", exc)
        briefing.no_questions = "le modèle n'a pas répondu"
        return
    for item in parse_reply_questions(reply.text):
        note = labels.get(str(item.get("source", "")).strip("[]"))
        question = " ".join(str(item.get("question", "")).split())
        if note is not None and question.endswith("?") and 8 <= len(question) <= 300:
            briefing.questions.append((question, note))
    briefing.questions = briefing.questions[:4]
    if not briefing.questions:
        briefing.no_questions = "le modèle n'a pas proposé de question utilisable"


def parse_reply_questions(text: str) -> list[dict[str, object]]:
    items = parse_reply(text, key="questions")
    return [i for i in items or [] if isinstance(i, dict)]


# --- the file ---------------------------------------------------------------------------------------


def render(briefing: Briefing, now: datetime) -> str:
    title = f"Briefing du {briefing.day.isoformat()}"
    frontmatter = {
        "title": title,
        "type": "briefing",
        "date": briefing.day.isoformat(),
        "tags": ["briefing", "obsirag"],
        "generated": now.astimezone().isoformat(timespec="minutes"),
    }
    lines = [f"# {title}", ""]
    if briefing.events:  # only for a user who connected a calendar
        lines += _section("Agenda du jour", _agenda(briefing.events), "")
    lines += _section("Rappels du jour", [_reminder(r) for r in briefing.reminders], "Aucun rappel aujourd'hui.")
    lines += _section(
        "Notes modifiées hier",
        [f"- {wikilink(n.path, n.title)}" for n in briefing.changed],
        "Aucune note modifiée hier.",
    )
    lines += _section("Tâches ouvertes depuis longtemps", _tasks(briefing), "Aucune tâche ancienne.")
    if briefing.cards_due:  # only for a user who has cards
        due = f"- {briefing.cards_due} carte(s) à revoir aujourd'hui : page « Cartes », ou `obsirag cards review`"
        lines += _section("Cartes à réviser", [due], "")
    lines += _section("Faits à valider", [_pending(f) for f in briefing.pending], "Aucun fait en attente.")
    lines += _section(
        "Questions ouvertes",
        [f"- {q} — {wikilink(n.path, n.title)}" for q, n in briefing.questions],
        f"Pas de question aujourd'hui : {briefing.no_questions or 'rien à demander'}.",
    )
    return render_frontmatter(frontmatter) + "\n".join(lines).rstrip() + "\n"


def _section(heading: str, lines: list[str], empty: str) -> list[str]:
    return [f"## {heading}", "", *(lines or [f"_{empty}_"]), ""]


def _tasks(briefing: Briefing) -> list[str]:
    lines = [
        f"- {text} — {wikilink(n.path, n.title)} (depuis le {since.isoformat()})" for text, n, since in briefing.tasks
    ]
    if briefing.more_tasks:
        lines.append(f"- … et {briefing.more_tasks} autres tâches ouvertes depuis longtemps")
    return lines


def _agenda(events: list[DayEvent]) -> list[str]:
    """« Aujourd'hui : 10:00 Dentiste, 14:30 Point Atlas », then each event with its end and place."""
    lines = ["Aujourd'hui : " + ", ".join(f"{e.clock} {e.summary}" for e in events), ""]
    for event in events:
        until = f"–{event.end:%H:%M}" if event.end else ""
        place = f" ({event.location})" if event.location else ""
        lines.append(f"- {event.clock}{until} {event.summary}{place}")
    return lines


def _reminder(reminder: Reminder) -> str:
    local = reminder.due_at.astimezone()
    flag = f" ⚠ repoussé {reminder.snoozes} fois" if reminder.flagged else ""
    return f"- {reminder.text} — {local:%Y-%m-%d %H:%M}{flag} (rappel #{reminder.id})"


def _pending(fact: Fact) -> str:
    ref = fact.source_ref
    cited = wikilink(ref) if ref.endswith(".md") else f"conversation {ref}" if ref else fact.source.value
    return f"- {fact.subject} — {fact.predicate} : {fact.value} — {cited} (fait #{fact.id}, à valider sur /memory)"


def briefing_path(vault_root: Path, day: date) -> Path:
    return generated_path(vault_root, f"{FOLDER}/{day.isoformat()}.md")
