"""``obsirag memory …``, ``obsirag remind …`` and ``obsirag reminders …``: memory and reminders from the shell."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING

import click

from services.config import Settings
from workers.cli_checks import Refusal

if TYPE_CHECKING:
    from services.catalog import Catalog


def _now(text: str | None) -> datetime:
    return datetime.fromisoformat(text).astimezone() if text else datetime.now().astimezone()


@contextmanager
def _catalog(settings: Settings) -> Iterator[Catalog]:
    from services.catalog import Catalog

    catalog = Catalog(settings.catalog_path)
    try:
        yield catalog
    finally:
        catalog.close()


def register(main: click.Group, common_options: click.decorators.FC) -> None:  # type: ignore[name-defined]
    """Add the commands to ``main`` with the CLI's ``--vault`` / ``--data`` options."""

    @main.group()
    def memory() -> None:
        """What ObsiRAG remembers about you (facts), auditable in obsirag/assistant/Profil.md."""

    @memory.command("export")
    @common_options
    def export(settings: Settings) -> None:
        """Print every fact (any status, history included) as JSON."""
        with _catalog(settings) as catalog:
            facts = [f.model_dump(mode="json") for f in catalog.facts()]
        click.echo(json.dumps(facts, ensure_ascii=False, indent=2))

    @memory.command("forget")
    @click.argument("fact_id", type=int)
    @common_options
    def forget(settings: Settings, fact_id: int) -> None:
        """Forget fact FACT_ID (kept as rejected, so that it is not learnt again)."""
        from services.memory.facts import forget_fact

        with _catalog(settings) as catalog:
            fact = catalog.get_fact(fact_id)
            if fact is None:
                raise Refusal(f"aucun fait n° {fact_id}")
            forget_fact(catalog, fact_id, _now(None))
        click.echo(f"fait n° {fact_id} oublié : {fact.sentence()}")

    @memory.command("confirm")
    @click.argument("fact_id", type=int)
    @click.option("--value", help="Correct the value while confirming.")
    @common_options
    def confirm(settings: Settings, fact_id: int, value: str | None) -> None:
        """Confirm pending fact FACT_ID (it becomes the current value of its subject and predicate)."""
        from services.memory.facts import confirm_fact

        with _catalog(settings) as catalog:
            try:
                fact = confirm_fact(catalog, fact_id, _now(None), value)
            except KeyError:
                raise Refusal(f"aucun fait n° {fact_id}") from None
        click.echo(f"fait n° {fact_id} confirmé : {fact.sentence()}")

    @memory.command("run")
    @click.option("--now", "now_text", help="Act as if it were this local time (ISO 8601).")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @common_options
    def run(settings: Settings, now_text: str | None, as_json: bool) -> None:
        """Consolidate now (through the running mlx worker), then the mirrors and the briefing if due."""
        from services.memory.cycle import run_memory, summary

        ask, wait = _model(settings)
        with _catalog(settings) as catalog:
            report = run_memory(settings, catalog, ask, _now(now_text), consolidate_now=True, wait=wait)
        result = summary(report)
        click.echo(json.dumps(result, ensure_ascii=False, indent=2 if as_json else None))

    @main.command()
    @click.argument("request", nargs=-1, required=True)
    @click.option("--yes", is_flag=True, help="Save without asking for confirmation.")
    @click.option("--now", "now_text", help="Act as if it were this local time (ISO 8601).")
    @common_options
    def remind(settings: Settings, request: tuple[str, ...], yes: bool, now_text: str | None) -> None:
        """A reminder in plain words: obsirag remind "rappelle-moi dans 3 semaines de relancer Sophie"."""
        from services.language.detect import detect_language
        from services.memory.reminders import MomentQuestion, parse_reminder, save_reminder

        text, now = " ".join(request), _now(now_text)
        draft = parse_reminder(_as_request(text), now)
        if draft is None:
            raise Refusal("aucun moment compris : par exemple « dans 3 semaines de relancer Sophie »")
        if isinstance(draft, MomentQuestion):  # a day that does not exist or has passed: nothing saved
            raise Refusal(draft.question())
        click.echo(draft.confirmation())
        if not yes and not _agreed(detect_language(text)):
            click.echo("Rien d’enregistré.")
            return
        with _catalog(settings) as catalog:
            reminder = save_reminder(catalog, draft, now, source="cli")
        click.echo(f"rappel n° {reminder.id} enregistré")

    @main.group()
    def reminders() -> None:
        """Reminders: list the active ones, mark one done, snooze one."""

    @reminders.command("list")
    @click.option("--due", is_flag=True, help="Only the reminders due now.")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @click.option("--now", "now_text", help="Act as if it were this local time (ISO 8601).")
    @common_options
    def listing(settings: Settings, due: bool, as_json: bool, now_text: str | None) -> None:
        """Active reminders, soonest first (⚠ when snoozed three times)."""
        from services.catalog.memory_models import ReminderStatus
        from services.memory.reminders import reminder_line

        with _catalog(settings) as catalog:
            found = catalog.reminders(ReminderStatus.ACTIVE, due_before=_now(now_text) if due else None)
        if as_json:
            click.echo(json.dumps([r.model_dump(mode="json") | {"flagged": r.flagged} for r in found], indent=2))
            return
        for reminder in found:
            click.echo(reminder_line(reminder).removeprefix("- [ ] "))
        if not found:  # said on stderr: a script reading the list still gets an empty one
            click.echo("Aucun rappel dû." if due else "Aucun rappel actif.", err=True)

    @reminders.command("done")
    @click.argument("reminder_id", type=int)
    @common_options
    def done(settings: Settings, reminder_id: int) -> None:
        """Mark a reminder done (a recurring one moves to its next time)."""
        from services.memory.reminders import mark_done

        _change(settings, reminder_id, mark_done)

    @reminders.command("snooze")
    @click.argument("reminder_id", type=int)
    @common_options
    def snooze(settings: Settings, reminder_id: int) -> None:
        """Snooze a reminder by a day (flagged after three snoozes)."""
        from services.memory.reminders import snooze as snooze_reminder

        _change(settings, reminder_id, snooze_reminder)


YES = ("", "o", "oui", "y", "yes")  # Enter keeps the default: save
NO = ("n", "non", "no")
ASK = {"fr": "Enregistrer ? [O/n] ", "en": "Save? [Y/n] "}


def _agreed(language: str) -> bool:
    """The user's yes or no, in either language (« o », « oui », « y », « yes »; « n », « non », « no »);
    asked again on anything else. Enter saves."""
    while True:
        word = click.prompt(ASK.get(language, ASK["fr"]), default="", show_default=False, prompt_suffix="")
        if word.strip().lower() in YES + NO:
            return word.strip().lower() in YES
        click.echo("Répondez o (oui) ou n (non).", err=True)


def _as_request(text: str) -> str:
    """``text`` with a trigger in its own language ("on Friday to call Bob" → "remind me on Friday …")."""
    from services.language.detect import detect_language

    if text.lower().startswith(("rappel", "remind")):
        return text
    return f"remind me {text}" if detect_language(text) == "en" else f"rappelle-moi {text}"


def _change(settings: Settings, reminder_id: int, action: object) -> None:
    from services.catalog.memory_models import ReminderStatus
    from services.memory.reminders import reminder_line

    with _catalog(settings) as catalog:
        try:
            reminder = action(catalog, reminder_id, _now(None))  # type: ignore[operator]
        except KeyError:
            raise Refusal(f"aucun rappel n° {reminder_id}") from None
    said = "fait" if reminder.status is ReminderStatus.DONE else "reporté"
    click.echo(f"{said} : {reminder_line(reminder).removeprefix('- [ ] ')}")


def memory_status_now(settings: Settings):  # type: ignore[no-untyped-def]
    """``obsirag status``'s memory lines: facts, the last consolidation, tokens today, reminders due."""
    from services.memory.status import memory_status

    with _catalog(settings) as catalog:
        return memory_status(settings, catalog, _now(None))


def _model(settings: Settings):  # type: ignore[no-untyped-def]
    """The running mlx worker as an ``AskFn`` and why consolidation waits for it (its model cannot write),
    or (None, None) when none runs (the deterministic parts go on)."""
    from services.llm.capability import writer_wait
    from services.memory.llm import ask_through
    from services.system import SystemClient

    client = SystemClient(settings).generation
    try:
        state = client.state()
    except Exception:  # no Redis: no system
        state = None
    if state is None:
        return None, None
    return ask_through(client, settings.llm_temperature), writer_wait(settings, state)
