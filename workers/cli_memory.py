"""``obsirag memory …``, ``obsirag remind …`` and ``obsirag reminders …``: memory and reminders from the shell."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING

import click

from services.config import Settings
from workers.cli_text import JSON_HELP, NOW_METAVAR, example, tr

NOW_HELP = tr("Fait comme s'il était cette heure locale (ISO 8601).", "Act as if it were this local time (ISO 8601).")

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
    _memory_commands(main, common_options)
    _remind_command(main, common_options)
    _reminder_commands(main, common_options)


def _memory_commands(main: click.Group, common_options: click.decorators.FC) -> None:  # type: ignore[name-defined]
    @main.group(
        help=tr(
            "Ce qu'ObsiRAG retient de toi (des faits), vérifiable dans obsirag/assistant/Profil.md.",
            "What ObsiRAG remembers about you (facts), auditable in obsirag/assistant/Profil.md.",
        )
    )
    def memory() -> None:
        pass

    @memory.command(
        "export",
        help=tr(
            "Affiche tous les faits (tout statut, historique compris) en JSON.",
            "Print every fact (any status, history included) as JSON.",
        ),
        epilog=example("obsirag memory export > faits.json"),
    )
    @common_options
    def export(settings: Settings) -> None:
        with _catalog(settings) as catalog:
            facts = [f.model_dump(mode="json") for f in catalog.facts()]
        click.echo(json.dumps(facts, ensure_ascii=False, indent=2))

    @memory.command(
        "forget",
        help=tr(
            "Oublie le fait FACT_ID (gardé comme rejeté, pour ne pas l'apprendre à nouveau).",
            "Forget fact FACT_ID (kept as rejected, so that it is not learnt again).",
        ),
        epilog=example("obsirag memory forget 12"),
    )
    @click.argument("fact_id", type=int)
    @common_options
    def forget(settings: Settings, fact_id: int) -> None:
        from services.memory.facts import forget_fact

        with _catalog(settings) as catalog:
            fact = catalog.get_fact(fact_id)
            if fact is None:
                raise click.ClickException(tr(f"aucun fait n° {fact_id}", f"no fact #{fact_id}"))
            forget_fact(catalog, fact_id, _now(None))
        click.echo(tr(f"fait n° {fact_id} oublié : ", f"fact #{fact_id} forgotten: ") + fact.sentence())

    @memory.command(
        "confirm",
        help=tr(
            "Confirme le fait en attente FACT_ID (il devient la valeur actuelle de son sujet et de son prédicat).",
            "Confirm pending fact FACT_ID (it becomes the current value of its subject and predicate).",
        ),
        epilog=example("obsirag memory confirm 12 --value végétarien"),
    )
    @click.argument("fact_id", type=int)
    @click.option(
        "--value",
        metavar=tr("VALEUR", "VALUE"),
        help=tr("Corrige la valeur en confirmant.", "Correct the value while confirming."),
    )
    @common_options
    def confirm(settings: Settings, fact_id: int, value: str | None) -> None:
        from services.memory.facts import confirm_fact

        with _catalog(settings) as catalog:
            try:
                fact = confirm_fact(catalog, fact_id, _now(None), value)
            except KeyError:
                raise click.ClickException(tr(f"aucun fait n° {fact_id}", f"no fact #{fact_id}")) from None
        click.echo(tr(f"fait n° {fact_id} confirmé : ", f"fact #{fact_id} confirmed: ") + fact.sentence())

    @memory.command(
        "run",
        help=tr(
            "Consolide maintenant (par le modèle du système lancé), puis les miroirs et le briefing s'ils sont dus.",
            "Consolidate now (through the running mlx worker), then the mirrors and the briefing if due.",
        ),
        epilog=example("obsirag memory run --json"),
    )
    @click.option("--now", "now_text", metavar=NOW_METAVAR, help=NOW_HELP)
    @click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
    @common_options
    def run(settings: Settings, now_text: str | None, as_json: bool) -> None:
        from services.memory.cycle import run_memory, summary

        ask, wait = _model(settings)
        with _catalog(settings) as catalog:
            report = run_memory(settings, catalog, ask, _now(now_text), consolidate_now=True, wait=wait)
        result = summary(report)
        click.echo(json.dumps(result, ensure_ascii=False, indent=2 if as_json else None))


def _remind_command(main: click.Group, common_options: click.decorators.FC) -> None:  # type: ignore[name-defined]
    @main.command(
        help=tr(
            "Un rappel en mots simples, redit avant d'être enregistré (« tous les lundis à 9 h de … » aussi).",
            "A reminder in plain words, said back before it is saved (« every Monday at 9 to … » too).",
        ),
        epilog=example(
            tr('obsirag remind "dans 3 semaines de relancer Sophie"', 'obsirag remind "in 3 weeks to call Sophie back"')
        ),
    )
    @click.argument("request", nargs=-1, required=True)
    @click.option("--yes", is_flag=True, help=tr("Enregistre sans demander.", "Save without asking for confirmation."))
    @click.option("--now", "now_text", metavar=NOW_METAVAR, help=NOW_HELP)
    @common_options
    def remind(settings: Settings, request: tuple[str, ...], yes: bool, now_text: str | None) -> None:
        from services.language.detect import detect_language
        from services.memory.reminders import MomentQuestion, parse_reminder, save_reminder

        text, now = " ".join(request), _now(now_text)
        draft = parse_reminder(_as_request(text), now)
        if draft is None:
            raise click.ClickException(
                tr(
                    "aucun moment compris : par exemple « dans 3 semaines de relancer Sophie »",
                    "no time understood: for example « in 3 weeks to call Sophie back »",
                )
            )
        if isinstance(draft, MomentQuestion):  # a day that does not exist or has passed: nothing saved
            raise click.ClickException(draft.question())
        click.echo(draft.confirmation())
        if not yes and not _agreed(detect_language(text)):
            click.echo(tr("Rien d’enregistré.", "Nothing saved."))
            return
        with _catalog(settings) as catalog:
            reminder = save_reminder(catalog, draft, now, source="cli")
        click.echo(tr(f"rappel n° {reminder.id} enregistré", f"reminder #{reminder.id} saved"))


def _reminder_commands(main: click.Group, common_options: click.decorators.FC) -> None:  # type: ignore[name-defined]
    @main.group(
        help=tr(
            "Rappels : liste les actifs, marque-en un fait, reporte-en un.",
            "Reminders: list the active ones, mark one done, snooze one.",
        )
    )
    def reminders() -> None:
        pass

    @reminders.command(
        "list",
        help=tr(
            "Les rappels actifs, les plus proches d'abord (⚠ après trois reports).",
            "Active reminders, soonest first (⚠ when snoozed three times).",
        ),
        epilog=example("obsirag reminders list --due"),
    )
    @click.option(
        "--due", is_flag=True, help=tr("Seulement les rappels dus maintenant.", "Only the reminders due now.")
    )
    @click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
    @click.option("--now", "now_text", metavar=NOW_METAVAR, help=NOW_HELP)
    @common_options
    def listing(settings: Settings, due: bool, as_json: bool, now_text: str | None) -> None:
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
            click.echo(
                tr("Aucun rappel dû.", "No reminder due.") if due else tr("Aucun rappel actif.", "No active reminder."),
                err=True,
            )

    @reminders.command(
        "done",
        help=tr(
            "Marque un rappel comme fait (un rappel récurrent passe à sa prochaine date).",
            "Mark a reminder done (a recurring one moves to its next time).",
        ),
        epilog=example("obsirag reminders done 3"),
    )
    @click.argument("reminder_id", type=int)
    @common_options
    def done(settings: Settings, reminder_id: int) -> None:
        from services.memory.reminders import mark_done

        _change(settings, reminder_id, mark_done)

    @reminders.command(
        "snooze",
        help=tr(
            "Reporte un rappel d'un jour (signalé après trois reports).",
            "Snooze a reminder by a day (flagged after three snoozes).",
        ),
        epilog=example("obsirag reminders snooze 3"),
    )
    @click.argument("reminder_id", type=int)
    @common_options
    def snooze(settings: Settings, reminder_id: int) -> None:
        from services.memory.reminders import snooze as snooze_reminder

        _change(settings, reminder_id, snooze_reminder)


YES = ("", "o", "oui", "y", "yes")  # Enter keeps the default: save
NO = ("n", "non", "no")
ASK = {"fr": "Enregistrer ? [O/n] ", "en": "Save? [Y/n] "}  # in the request's language, as its confirmation
ANSWER = {"fr": "Réponds o (oui) ou n (non).", "en": "Answer y (yes) or n (no)."}


def _agreed(language: str) -> bool:
    """The user's yes or no, in either language (« o », « oui », « y », « yes »; « n », « non », « no »);
    asked again on anything else. Enter saves."""
    while True:
        word = click.prompt(ASK.get(language, ASK["fr"]), default="", show_default=False, prompt_suffix="")
        if word.strip().lower() in YES + NO:
            return word.strip().lower() in YES
        click.echo(ANSWER.get(language, ANSWER["fr"]), err=True)


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
            raise click.ClickException(tr(f"aucun rappel n° {reminder_id}", f"no reminder #{reminder_id}")) from None
    said = tr("fait", "done") if reminder.status is ReminderStatus.DONE else tr("reporté", "snoozed")
    click.echo(tr(f"{said} : ", f"{said}: ") + reminder_line(reminder).removeprefix("- [ ] "))


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
