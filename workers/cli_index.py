"""``obsirag index`` and ``obsirag reindex``: the index built in the foreground, or rebuilt by the running system."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from services.config import Settings
from workers.cli_options import common_options
from workers.cli_text import LANG, Command, example, tr

if TYPE_CHECKING:
    from services.indexing.pipeline import IndexPipeline


@click.command(
    cls=Command,
    help=tr(
        "Indexe le coffre une fois, au premier plan (le système n'a pas besoin de tourner).",
        "Index the vault once, in the foreground (the system need not run).",
    ),
    epilog=example("obsirag index --vault ~/Obsidian"),
)
@common_options
def index(settings: Settings) -> None:
    index_in_foreground(settings, _open_pipeline(settings))


def index_in_foreground(settings: Settings, pipeline: IndexPipeline) -> None:
    from tqdm import tqdm

    from services.indexing.reconcile import changed_paths

    paths = changed_paths(settings, pipeline.catalog)
    run_id = pipeline.run_id = pipeline.catalog.start_run("cli-index")
    batch = settings.index_batch_notes
    with tqdm(total=len(paths), unit="note", desc=tr("indexation", "indexing"), file=sys.stderr) as bar:
        for start in range(0, len(paths), batch):
            report = pipeline.sync_paths(paths[start : start + batch])
            bar.update(len(paths[start : start + batch]))
            bar.set_postfix(chunks=report.chunks_embedded, failed=len(report.failed))
    pipeline.catalog.finish_run(run_id)
    pipeline.store.optimize()
    pipeline.store.close()
    _print_counts(settings)


@click.command(
    cls=Command,
    help=tr(
        "Reconstruit l'index de zéro (par exemple après un changement de modèle d'embedding).",
        "Rebuild the index from scratch (e.g. after changing the embedding model).",
    ),
    epilog=example("OBSIRAG_EMBEDDING_MODEL=bundled:all-MiniLM-L6-v2 obsirag reindex"),
)
@common_options
def reindex(settings: Settings) -> None:
    from services.system import SystemClient

    client = SystemClient(settings)
    if client.wait_running(settings.search_timeout):  # Redis or the indexer restarting: wait for them
        client.reindex()
        click.echo(
            tr(
                "réindexation lancée : l'indexeur reconstruit l'index à côté de l'actuel, qui répond toujours",
                "reindex queued: the running indexer rebuilds the index beside the live one, which keeps answering",
            )
        )
        return
    if message := client.unavailable(LANG):  # the system runs: never open the store its indexer owns
        raise click.ClickException(message)
    rebuild_in_foreground(settings)


def rebuild_in_foreground(settings: Settings) -> None:
    """Build the next index beside the current one, switch, then bring the catalog up to date."""
    from tqdm import tqdm

    from services.indexing.rebuild import Rebuild, open_index

    pipeline, _engine, configured, rebuild = open_index(settings)
    rebuild = rebuild or Rebuild.start(settings, pipeline, configured)
    progress = rebuild.progress()
    with tqdm(
        total=progress.total,
        initial=progress.done,
        unit="note",
        desc=tr("reconstruction", "rebuilding"),
        file=sys.stderr,
    ) as bar:
        while not rebuild.step(settings.index_batch_notes):
            rebuild.wait_for_graphs()  # the next index's search graphs, built in a child process
            bar.total = rebuild.progress().total
            bar.update(rebuild.progress().done - bar.n)
    click.echo(tr(f"index reconstruit avec {configured.name}", f"index rebuilt with {configured.name}"))
    index_in_foreground(settings, pipeline)


def rebuild_notice(settings: Settings) -> str | None:
    """One line when the embedded index was built with another model: the indexer rebuilds it at start."""
    if settings.qdrant_url:
        return None  # a server's collection is checked by the indexer, which logs the advice
    from services.retrieval.store.edge_folder import recorded_model_at

    recorded = recorded_model_at(settings.store_path)
    if recorded is None or recorded.name == settings.embedding_model:
        return None
    return tr(
        f"L'index a été construit avec {recorded.name} : reconstruction avec {settings.embedding_model} à côté de "
        "l'actuel, qui répond pendant ce temps (avancement : `obsirag status`, le tableau de bord).",
        f"The index was built with {recorded.name}: rebuilding it with {settings.embedding_model} beside the "
        "live one, which answers meanwhile (progress: `obsirag status`, the dashboard).",
    )


def _open_pipeline(settings: Settings) -> IndexPipeline:
    from services.indexing.rebuild import open_pipeline

    return open_pipeline(settings)


def _print_counts(settings: Settings) -> None:
    from services.system.client import note_counts

    counts = note_counts(settings)
    click.echo(
        tr(
            f"{counts['indexed']} indexées, {counts['skipped']} ignorées, {counts['error']} en échec",
            f"{counts['indexed']} indexed, {counts['skipped']} skipped, {counts['error']} failed",
        )
    )
