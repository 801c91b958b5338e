"""``obsirag ask``: a question to the vault, its answer streamed, then its sources."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import click

from services.config import Settings
from workers.cli_checks import check_thread, not_blank
from workers.cli_options import common_options
from workers.cli_output import ReadingProgress, ask_json, explain_grounding, fail_ask, print_sources
from workers.cli_text import LANG, Command, example, tr


@click.command(
    cls=Command,
    help=tr(
        "Pose une question au coffre ; la réponse s'affiche au fil de l'eau, avec ses sources.",
        "Ask the vault a question; the answer streams with its sources.",
    ),
    epilog=example(
        tr('obsirag ask "Que disent mes notes sur le levain ?"', 'obsirag ask "What do my notes say about sourdough?"')
    ),
)
@click.argument("question", nargs=-1, required=True, callback=not_blank)
@click.option(
    "--thread",
    "thread_id",
    metavar="ID",
    help=tr(
        "Continue cette conversation (son id s'affiche après chaque réponse).",
        "Continue this conversation (id printed after each answer).",
    ),
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help=tr("Affiche du JSON, une fois la réponse complète.", "Print JSON once the answer is complete."),
)
@click.option(
    "--web/--no-web",
    "use_web",
    default=None,
    help=tr(
        "Envoie la question au moteur de recherche web quand le coffre ne sait pas (défaut : OBSIRAG_WEB_SEARCH, non).",
        "Send the question to the web search engine when the vault cannot answer (default: OBSIRAG_WEB_SEARCH, off).",
    ),
)
@click.option(
    "--research",
    is_flag=True,
    help=tr(
        "Mode recherche : découpe la question en sous-questions, cherche chacune (étapes sur stderr), puis répond.",
        "Research mode: split the question into sub-questions, search each (steps on stderr), then answer.",
    ),
)
@click.option(
    "--save",
    is_flag=True,
    help=tr(
        "Exporte la conversation dans obsirag/conversations/ du coffre (avec --research : la recherche dans "
        "obsirag/research/).",
        "Export the conversation to obsirag/conversations/ in the vault (with --research: the research to "
        "obsirag/research/).",
    ),
)
@click.option(
    "--explain",
    is_flag=True,
    help=tr("Montre la décision du garde-fou et ses indices.", "Show the grounding guard's decision and its evidence."),
)
@click.option(
    "--write/--quote",
    "write",
    default=None,
    help=tr(
        "Laisse le modèle rédiger la réponse, ou cite les notes (défaut : selon le modèle ; le modèle intégré cite).",
        "Let the model write the answer, or quote the notes (default: as the model can; the bundled one quotes).",
    ),
)
@common_options
def ask(
    settings: Settings,
    question: tuple[str, ...],
    thread_id: str | None,
    as_json: bool,
    use_web: bool | None,
    save: bool,
    explain: bool,
    write: bool | None,
    research: bool,
) -> None:
    from services.system import SystemClient, SystemNotRunning, build_chat_engine
    from services.system.client import NOT_RUNNING, NOT_RUNNING_FR

    check_thread(settings, thread_id)
    client = SystemClient(settings)
    try:
        client.ensure_running(LANG, tr(NOT_RUNNING_FR, NOT_RUNNING))
    except SystemNotRunning as exc:
        raise click.ClickException(str(exc)) from None
    engine = build_chat_engine(settings, client=client)
    final = None
    progress = ReadingProgress()
    streamed = ""
    text = " ".join(question)
    if research:
        from services.research.engine import ResearchEngine

        events = ResearchEngine(engine).ask(text, thread_id=thread_id, write=write)
    else:
        events = engine.ask(text, thread_id=thread_id, use_web=use_web, write=write)
    for event in events:
        if event.kind == "step" and event.step is not None:
            progress.clear()
            click.echo(event.step.text, err=True)
        elif event.kind == "progress":
            progress.show(event.progress or 0.0)
        elif event.kind == "token" and not as_json:
            progress.clear()
            click.echo(event.text, nl=False)
            streamed += event.text
        elif event.kind == "error":
            progress.clear()
            fail_ask(event, streamed, as_json)
        elif event.kind == "done":
            final = event.answer
    if final is None:
        raise click.ClickException(tr("pas de réponse", "no answer"))
    if save and research:
        _save_research(settings, engine.catalog, final.turn_id, final.plan.language if final.plan else "fr")
    elif save:
        _save_thread(settings, engine.catalog, final.thread_id)
    if as_json:
        click.echo(json.dumps(ask_json(final), ensure_ascii=False, indent=2))
        return
    print_sources(final, streamed)
    if explain and final.grounding:
        click.echo(explain_grounding(final.grounding))


def _save_thread(settings: Settings, catalog: Any, thread_id: str) -> None:
    from services.chat.export import export_thread

    thread = catalog.get_thread(thread_id)
    path = export_thread(settings.vault, thread, datetime.now().astimezone())
    click.echo(tr("enregistrée : ", "saved ") + str(path.relative_to(settings.vault)), err=True)


def _save_research(settings: Settings, catalog: Any, turn_id: int | None, language: str) -> None:
    from services.research.trail import save_research

    path = save_research(settings.vault, catalog.get_turn(turn_id), datetime.now().astimezone(), language)
    click.echo(tr("recherche enregistrée : ", "research saved ") + str(path.relative_to(settings.vault)), err=True)
