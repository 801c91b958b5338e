"""The ``obsirag`` command."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

import click

from services.config import Settings
from services.system.startup import claim_data_dir
from services.vault.models import NoteType
from workers.cli_ask import ask
from workers.cli_cards import register as _register_cards
from workers.cli_checks import K_RANGE, check_range, day, not_blank
from workers.cli_clip import clip
from workers.cli_config import register as _register_config
from workers.cli_connect import register_connect, register_connectors
from workers.cli_index import index, rebuild_notice, reindex
from workers.cli_instance import register as _register_instance
from workers.cli_learn import learn
from workers.cli_memory import memory_status_now
from workers.cli_memory import register as _register_memory
from workers.cli_model import local_server_notice
from workers.cli_model import register as _register_model
from workers.cli_model_use import describe_pull, offer_better_model
from workers.cli_options import FOLDER, common_options
from workers.cli_output import print_results, search_json
from workers.cli_status import print_status
from workers.cli_text import JSON_HELP, LANG, Group, example, tr
from workers.mcp_server import mcp

if TYPE_CHECKING:
    from services.retrieval.search import SearchRequest, SearchResponse

# Import-time cost matters for a CLI: heavy modules (torch, qdrant) load inside the commands.

DAY = tr("AAAA-MM-JJ", "YYYY-MM-DD")


@click.group(
    cls=Group,
    help=tr("ObsiRAG : parle avec ton coffre Obsidian, en privé.", "ObsiRAG: talk to your Obsidian vault, privately."),
)
def main() -> None:
    pass


@main.command(
    help=tr(
        "Lance tout le système (Redis, surveillance du coffre, indexeur…) au premier plan ; Ctrl-C l'arrête.",
        "Start the whole system (Redis, watcher, indexer, …) in the foreground; Ctrl-C stops it.",
    ),
    epilog=example("obsirag up --vault ~/Obsidian"),
)
@common_options(find_running=False)
def up(settings: Settings) -> None:
    from services.system.startup import startup_problem

    # Everything that would make a child fail (and be restarted forever) is refused here, before any start.
    if problem := startup_problem(settings, LANG):
        raise click.ClickException(problem)
    from services.system.instance import describe
    from workers.announce import start_announcer
    from workers.process import setup_logging, stop_on_signals
    from workers.supervisor import AlreadyRunning, acquire_lock, stop_leftovers, supervise

    try:  # before the rebuild notice, whose store import takes seconds on a loaded machine
        lock = acquire_lock(settings)
    except AlreadyRunning as exc:
        raise click.ClickException(str(exc)) from None
    if stopped := stop_leftovers(settings):  # a supervisor killed -9 on a system without PR_SET_PDEATHSIG
        click.echo(
            tr(
                f"Processus laissés par un superviseur disparu, arrêtés : {describe(stopped)}.",
                f"Processes left by a vanished supervisor, stopped: {describe(stopped)}.",
            )
        )
    claim_data_dir(settings)  # before any worker writes there
    for line in filter(None, (rebuild_notice(settings), local_server_notice(settings))):
        click.echo(line)
    offer_better_model(settings)  # Apple silicon: a model that writes, proposed once
    setup_logging(settings, "supervisor")
    click.echo(
        tr(
            f"ObsiRAG : coffre {settings.vault}, données {settings.data_dir}. Ctrl-C pour arrêter.",
            f"ObsiRAG: vault {settings.vault}, data {settings.data_dir}. Ctrl-C to stop.",
        )
    )
    stop = stop_on_signals()
    start_announcer(settings, stop, click.echo)  # "Web UI: http://…" once the page answers, not before
    try:
        supervise(settings, stop, lock=lock)
    except AlreadyRunning as exc:  # a Redis started elsewhere answers on the data folder's socket
        raise click.ClickException(str(exc)) from None


@main.command(
    help=tr(
        "Recherche hybride (sens et mots) dans le coffre ; « cette semaine », « en mars 2026 »… filtrent par date.",
        "Hybrid search (meaning and words) over the vault; « this week », « in March 2026 »… filter by date.",
    ),
    epilog=example("obsirag search levain --tag cuisine --since 2025-01-01"),
)
@click.argument("query", nargs=-1, required=True, callback=not_blank)
@click.option(
    "-k",
    "k",
    default=10,
    type=K_RANGE,
    metavar="N",
    help=tr("Nombre de notes (1 à 30, 10 par défaut).", "How many notes to return (1 to 30, default 10)."),
)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.option(
    "--tag",
    "tags",
    multiple=True,
    metavar="TAG",
    help=tr("Seulement les notes de ce tag (répétable).", "Only notes with this tag (repeatable)."),
)
@click.option(
    "--folder",
    "folders",
    multiple=True,
    metavar=FOLDER,
    help=tr("Seulement sous ce dossier (répétable).", "Only notes under this folder (repeatable)."),
)
@click.option(
    "--type",
    "types",
    multiple=True,
    type=click.Choice([t.value for t in NoteType]),
    help=tr("Type de note.", "Note type."),
)
@click.option(
    "--since",
    callback=day,
    metavar=DAY,
    help=tr(
        "Seulement les notes datées de ce jour ou après (AAAA-MM-JJ).",
        "Only notes dated from this day on (YYYY-MM-DD).",
    ),
)
@click.option(
    "--until",
    callback=day,
    metavar=DAY,
    help=tr(
        "Seulement les notes datées d'avant ce jour (AAAA-MM-JJ).", "Only notes dated before this day (YYYY-MM-DD)."
    ),
)
@click.option(
    "--explain",
    is_flag=True,
    help=tr(
        "Montre pour chaque résultat ses rangs, le titre, le cosinus, le score et les mots trouvés.",
        "Show each hit's ranks, title match and cosine, score and matched terms.",
    ),
)
@common_options
def search(settings: Settings, query: tuple[str, ...], as_json: bool, explain: bool, **filters: Any) -> None:
    from services.retrieval.search import SearchRequest

    check_range(filters["since"], filters["until"])
    request = SearchRequest(
        query=" ".join(query),
        k=filters["k"],
        tags=list(filters["tags"]),
        folders=list(filters["folders"]),
        types=[NoteType(t) for t in filters["types"]],
        since=filters["since"],
        until=filters["until"],
    )
    response = run_search(settings, request)
    if as_json:
        click.echo(json.dumps(search_json(response), ensure_ascii=False, indent=2))
    else:
        print_results(response, explain)


@main.command(
    help=tr(
        "Notes indexées / ignorées / en échec, files d'attente et processus en vie.",
        "Notes indexed / skipped / failed, queue lengths and processes alive.",
    ),
    epilog=example("obsirag status --json"),
)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@common_options
def status(settings: Settings, as_json: bool) -> None:
    from services.models.progress import read_pulls
    from services.system import SystemClient

    state = SystemClient(settings).status(LANG)
    memory = memory_status_now(settings)
    pulls = [pull for pull in read_pulls(settings.model_cache) if pull.state != "done"]
    if as_json:
        data = {**state.model_dump(mode="json"), "memory": memory.model_dump(mode="json")}
        data["model_pulls"] = [{**pull.model_dump(mode="json"), "interrupted": pull.interrupted} for pull in pulls]
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    print_status(state, memory)
    if pulls:
        click.echo(tr("téléchargements de modèles :", "model downloads:"))
    for pull in pulls:
        click.echo(describe_pull(pull))


def run_search(settings: Settings, request: SearchRequest) -> SearchResponse:
    """Through the running indexer when there is one, else on the store opened here."""
    from services.retrieval.store.base import StoreLockedError
    from services.system import SystemNotRunning
    from services.system.offline_search import search_anywhere

    try:
        return search_anywhere(settings, request, LANG)
    except SystemNotRunning as exc:  # Redis restarting
        raise click.ClickException(str(exc)) from None
    except StoreLockedError as exc:  # `obsirag index` holding the store
        who = f" (pid {exc.owner})" if exc.owner else ""
        french = (
            f"L'index {exc.path} est déjà ouvert par un autre processus{who}, qui le tient : attends qu'il ait "
            "fini, ou cherche par le système lancé."
        )
        raise click.ClickException(tr(french, str(exc))) from None


for command in (index, reindex, ask, clip, learn, mcp):  # each in its own module: this one is long enough
    main.add_command(command)
_register_memory(main, common_options)
_register_cards(main, common_options)
_register_instance(main, common_options)
_register_config(main, common_options)
_register_model(main, common_options)
register_connect(main, common_options)
register_connectors(main, common_options)

if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    main()
