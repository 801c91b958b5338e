"""``obsirag learn``: the learner's insights, synapses and weekly synthesis, one cycle now or its state."""

from __future__ import annotations

import json
from datetime import datetime

import click

from services.config import Settings
from workers.cli_options import common_options
from workers.cli_text import JSON_HELP, NOW_HELP, NOW_METAVAR, Command, example, tr


@click.command(
    cls=Command,
    help=tr(
        "Insights, synapses et synthèse de la semaine : un cycle maintenant (--once), sinon l'état de l'apprenti.",
        "Insights, synapses and the weekly synthesis: run one cycle (--once), else show the learner's state.",
    ),
    epilog=example('obsirag learn --once --note "Projets/Projet Atlas.md"'),
)
@click.option(
    "--once",
    is_flag=True,
    help=tr("Un cycle tout de suite, au premier plan.", "Run one learner cycle now, in the foreground."),
)
@click.option(
    "--note",
    "note_path",
    metavar=tr("CHEMIN", "PATH"),
    help=tr(
        "Seulement cette note (chemin dans le coffre) : son insight et ses synapses.",
        "Only this note (vault-relative path): its insight and synapses.",
    ),
)
@click.option("--now", "now_text", metavar=NOW_METAVAR, help=NOW_HELP)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@common_options
def learn(settings: Settings, once: bool, note_path: str | None, now_text: str | None, as_json: bool) -> None:
    from services.system import SystemNotRunning
    from workers.learner import learner_state, run_once

    if not once:
        state = learner_state(settings)
        click.echo(json.dumps(state, ensure_ascii=False, indent=2 if as_json else None))
        return
    now = datetime.fromisoformat(now_text).astimezone() if now_text else datetime.now().astimezone()
    try:
        result = run_once(settings, note_path, now)
    except SystemNotRunning as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(result, ensure_ascii=False, indent=2))
        return
    if result["waiting"]:
        click.echo(tr("insights et synapses : ", "insights and synapses ") + result["waiting"])
    for path, artifact in result["processed"].items():
        click.echo(f"{path} → {artifact}")
    for path, reason in {**result["skipped"], **result["failed"]}.items():
        click.echo(f"{path}: {reason}")
    for artifact in [*result["synapses"], *filter(None, [result["synthesis"]])]:
        click.echo(tr(f"écrit : {artifact}", f"wrote {artifact}"))
