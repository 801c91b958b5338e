"""Where memory stands, for the dashboard, /memory and ``obsirag status``: the last consolidation (and one in
progress, or waiting for a model that writes), today's token use, reminders due, facts waiting, the next
consolidation and briefing, and the managed files' broken markers."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from pathlib import Path

from pydantic import BaseModel

from services.catalog import Catalog
from services.catalog.memory_models import FactStatus, ReminderStatus
from services.catalog.models import IndexRun
from services.config import Language, Settings
from services.language.moments import parse_clock
from services.llm.capability import WriterWait
from services.memory.briefing import LAST_DAY_KEY
from services.memory.consolidate import day_start
from services.memory.cycle import CONSOLIDATED_DAY_KEY, waiting_since
from services.memory.managed import ManagedFile, marker_problem
from services.memory.profile import SECTIONS, profile_file
from services.memory.reminders import reminders_file

MARKER_PROBLEMS = {
    "repairable": "{file} : un marqueur de la section « {section} » a été effacé ; ObsiRAG le remet à sa "
    "prochaine mise à jour (chaque minute), sans toucher à ton texte.",
    "missing": "{file} : la section « {section} » n'a plus ses marqueurs ({markers}) : ObsiRAG ne la met plus "
    "à jour. Remets-les autour de la section, ou supprime le fichier pour qu'il soit recréé.",
}


class MemoryStatus(BaseModel):
    last_consolidation: IndexRun | None = None  # the last one finished
    running: IndexRun | None = None  # a consolidation started and not finished yet
    waiting: WriterWait | None = None  # consolidation is due and waits for a model that writes
    waiting_since: datetime | None = None
    tokens_today: int = 0
    token_budget: int = 0
    facts_confirmed: int = 0
    facts_pending: int = 0
    reminders_due: int = 0
    reminders_flagged: int = 0
    next_consolidation: datetime
    next_briefing: datetime
    last_briefing: str | None = None  # the day of the last briefing written
    marker_problems: list[str] = []  # Profil.md / Rappels.md sections ObsiRAG cannot update as they are

    def lines(self, lang: Language = "en") -> list[str]:
        """What ``obsirag status`` prints."""
        said = _LINES[lang]
        run, stamp = self.last_consolidation, "%Y-%m-%d %H:%M"
        last = said["never"]
        if run is not None:
            added = said["added"].format(n=run.counters.get("facts_added", 0))
            last = f"{run.started_at.astimezone():{stamp}}" + (
                said["error"].format(e=run.error) if run.error else added
            )
        if self.running is not None:
            last += said["running"].format(at=f"{self.running.started_at.astimezone():%H:%M}")
        flagged = said["flagged"].format(n=self.reminders_flagged) if self.reminders_flagged else ""
        return [
            said["memory"].format(s=self, last=last),
            *([said["waiting"].format(w=self.waiting.text(lang))] if self.waiting else []),
            said["reminders"].format(n=self.reminders_due) + flagged,
            said["next"].format(
                c=f"{self.next_consolidation.astimezone():{stamp}}", b=f"{self.next_briefing.astimezone():{stamp}}"
            ),
            *(f"⚠ {problem}" for problem in self.marker_problems),
        ]


_LINES = {
    "en": {
        "never": "never",
        "added": ", {n} added",
        "error": " (error: {e})",
        "running": "; one running since {at}",
        "flagged": ", {n} snoozed 3 times",
        "memory": "memory: {s.facts_confirmed} facts, {s.facts_pending} pending; last consolidation {last}; "
        "tokens today {s.tokens_today}/{s.token_budget}",
        "waiting": "consolidation {w}",
        "reminders": "reminders: {n} due",
        "next": "next consolidation {c}, next briefing {b}",
    },
    "fr": {
        "never": "jamais",
        "added": ", {n} ajoutés",
        "error": " (erreur : {e})",
        "running": " ; une en cours depuis {at}",
        "flagged": ", {n} reportés 3 fois",
        "memory": "mémoire : {s.facts_confirmed} faits, {s.facts_pending} en attente ; dernière consolidation "
        "{last} ; jetons aujourd'hui {s.tokens_today}/{s.token_budget}",
        "waiting": "consolidation : {w}",
        "reminders": "rappels : {n} dus",
        "next": "prochaine consolidation {c}, prochain briefing {b}",
    },
}


def memory_status(settings: Settings, catalog: Catalog, now: datetime) -> MemoryStatus:
    active = catalog.reminders(ReminderStatus.ACTIVE)
    due = [r for r in active if r.is_due(now)]
    facts = catalog.active_facts()
    last, running = consolidation_runs(catalog.last_runs(50), now, settings)
    since, wait = waiting_since(catalog) or (None, None)
    return MemoryStatus(
        last_consolidation=last,
        running=running,
        waiting=wait,
        waiting_since=since,
        tokens_today=catalog.memory_tokens_since(day_start(now)),
        token_budget=settings.memory_daily_tokens,
        facts_confirmed=sum(f.status == FactStatus.CONFIRMED for f in facts),
        facts_pending=sum(f.status == FactStatus.PENDING for f in facts),
        reminders_due=len(due),
        reminders_flagged=sum(r.flagged for r in due),
        next_consolidation=_next_slot(settings.memory_consolidation_time, catalog.get_meta(CONSOLIDATED_DAY_KEY), now),
        next_briefing=_next_slot(settings.briefing_time, catalog.get_meta(LAST_DAY_KEY), now),
        last_briefing=catalog.get_meta(LAST_DAY_KEY),
        marker_problems=marker_problems(settings.vault),
    )


def consolidation_runs(
    runs: list[IndexRun], now: datetime, settings: Settings
) -> tuple[IndexRun | None, IndexRun | None]:
    """(the last consolidation finished, the one in progress) of ``runs``. A run unfinished after twice the
    model's timeout was cut short (its process killed): it is neither."""
    memory = [r for r in runs if r.kind == "memory"]
    last = next((r for r in memory if not r.running), None)
    cut_short = now - timedelta(seconds=2 * settings.llm_timeout_seconds)
    running = next((r for r in memory if r.running and r.started_at > cut_short), None)
    return last, running


def marker_problems(vault_root: Path) -> list[str]:
    """One sentence per managed section whose markers a hand edit broke, in the files that exist."""
    profile = profile_file(vault_root)
    found = _file_problems(profile, {name: heading for name, (_kind, heading) in SECTIONS.items()}, vault_root)
    return found + _file_problems(reminders_file(vault_root), {"reminders": "rappels"}, vault_root)


def _file_problems(mirror: ManagedFile, sections: dict[str, str], vault_root: Path) -> list[str]:
    text = mirror.text()
    if text is None:
        return []
    where = mirror.path.relative_to(vault_root.resolve()).as_posix()
    found = []
    for name, section in sections.items():
        if problem := marker_problem(text, name):
            markers = f"`<!-- obsirag:managed:{name} -->` … `<!-- /obsirag:managed:{name} -->`"
            found.append(MARKER_PROBLEMS[problem].format(file=where, section=section, markers=markers))
    return found


def _next_slot(clock: str, done_day: str | None, now: datetime) -> datetime:
    """The next daily slot at ``clock``: now when today's (or a missed one) is still to do."""
    local = now.astimezone()
    at: time = parse_clock(clock)
    today = datetime.combine(local.date(), at, tzinfo=local.tzinfo)
    latest = today if local >= today else today - timedelta(days=1)
    if done_day is None or date.fromisoformat(done_day) < latest.date():
        return local  # due now (the next tick does it)
    return today if local < today else today + timedelta(days=1)
