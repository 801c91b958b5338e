"""The ``obsirag`` command."""

from __future__ import annotations

import json
import logging
import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any

import click

from services.config import Settings
from services.system.startup import claim_data_dir
from services.vault.models import NoteType
from workers.cli_checks import K_RANGE, check_range, check_thread, day, not_blank
from workers.cli_config import register as _register_config
from workers.cli_instance import register as _register_instance
from workers.cli_memory import memory_status_now
from workers.cli_memory import register as _register_memory
from workers.cli_options import common_options
from workers.cli_output import (
    ReadingProgress,
    ask_json,
    explain_grounding,
    fail_ask,
    print_results,
    print_sources,
    search_json,
)
from workers.mcp_server import mcp

if TYPE_CHECKING:
    from services.indexing.pipeline import IndexPipeline
    from services.retrieval.search import SearchRequest, SearchResponse

# Import-time cost matters for a CLI: heavy modules (torch, qdrant) load inside the commands.


@click.group()
def main() -> None:
    """ObsiRAG: talk to your Obsidian vault, privately."""


@main.command()
@common_options(find_running=False)
def up(settings: Settings) -> None:
    """Start the whole system (Redis, watcher, indexer, …) in the foreground; Ctrl-C stops it."""
    from services.system.startup import startup_problem

    # Everything that would make a child fail (and be restarted forever) is refused here, before any start.
    if problem := startup_problem(settings):
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
        click.echo(f"Processus laissés par un superviseur disparu, arrêtés : {describe(stopped)}.")
    claim_data_dir(settings)  # before any worker writes there
    if line := _rebuild_notice(settings):
        click.echo(line)
    setup_logging(settings, "supervisor")
    click.echo(f"ObsiRAG: vault {settings.vault}, data {settings.data_dir}. Ctrl-C to stop.")
    stop = stop_on_signals()
    start_announcer(settings, stop, click.echo)  # "Web UI: http://…" once the page answers, not before
    try:
        supervise(settings, stop, lock=lock)
    except AlreadyRunning as exc:  # a Redis started elsewhere answers on the data folder's socket
        raise click.ClickException(str(exc)) from None


@main.command()
@common_options
def index(settings: Settings) -> None:
    """Index the vault once, in the foreground (the system need not run)."""
    index_in_foreground(settings, _open_pipeline(settings))


def index_in_foreground(settings: Settings, pipeline: IndexPipeline) -> None:
    from tqdm import tqdm

    from services.indexing.reconcile import changed_paths

    paths = changed_paths(settings, pipeline.catalog)
    run_id = pipeline.run_id = pipeline.catalog.start_run("cli-index")
    batch = settings.index_batch_notes
    with tqdm(total=len(paths), unit="note", desc="indexing", file=sys.stderr) as bar:
        for start in range(0, len(paths), batch):
            report = pipeline.sync_paths(paths[start : start + batch])
            bar.update(len(paths[start : start + batch]))
            bar.set_postfix(chunks=report.chunks_embedded, failed=len(report.failed))
    pipeline.catalog.finish_run(run_id)
    pipeline.store.optimize()
    pipeline.store.close()
    _print_counts(settings)


@main.command()
@common_options
def reindex(settings: Settings) -> None:
    """Rebuild the index from scratch (e.g. after changing the embedding model)."""
    from services.system import SystemClient

    client = SystemClient(settings)
    if client.wait_running(settings.search_timeout):  # Redis or the indexer restarting: wait for them
        client.reindex()
        click.echo("reindex queued: the running indexer rebuilds the index beside the live one, which keeps answering")
        return
    if message := client.unavailable():  # the system runs: never open the store its indexer owns
        raise click.ClickException(message)
    rebuild_in_foreground(settings)


def rebuild_in_foreground(settings: Settings) -> None:
    """Build the next index beside the current one, switch, then bring the catalog up to date."""
    from tqdm import tqdm

    from services.indexing.rebuild import Rebuild, open_index

    pipeline, _engine, configured, rebuild = open_index(settings)
    rebuild = rebuild or Rebuild.start(settings, pipeline, configured)
    progress = rebuild.progress()
    with tqdm(total=progress.total, initial=progress.done, unit="note", desc="rebuilding", file=sys.stderr) as bar:
        while not rebuild.step(settings.index_batch_notes):
            bar.total = rebuild.progress().total
            bar.update(rebuild.progress().done - bar.n)
    click.echo(f"index rebuilt with {configured.name}")
    index_in_foreground(settings, pipeline)


@main.command()
@click.argument("query", nargs=-1, required=True, callback=not_blank)
@click.option("-k", "k", default=10, show_default=True, type=K_RANGE, help="How many notes to return.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--tag", "tags", multiple=True, help="Only notes with this tag (repeatable).")
@click.option("--folder", "folders", multiple=True, help="Only notes under this folder (repeatable).")
@click.option("--type", "types", multiple=True, type=click.Choice([t.value for t in NoteType]), help="Note type.")
@click.option("--since", callback=day, help="Only notes dated from this day on (YYYY-MM-DD).")
@click.option("--until", callback=day, help="Only notes dated before this day (YYYY-MM-DD).")
@click.option("--explain", is_flag=True, help="Show each hit's ranks, title match and cosine, score and matched terms.")
@common_options
def search(settings: Settings, query: tuple[str, ...], as_json: bool, explain: bool, **filters: Any) -> None:
    """Hybrid search over the vault."""
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


@main.command()
@click.argument("question", nargs=-1, required=True, callback=not_blank)
@click.option("--thread", "thread_id", help="Continue this conversation (id printed after each answer).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON once the answer is complete.")
@click.option(
    "--web/--no-web",
    "use_web",
    default=None,
    help="Send the question to the web search engine when the vault cannot answer (default: OBSIRAG_WEB_SEARCH, off).",
)
@click.option("--save", is_flag=True, help="Export the conversation to obsirag/conversations/ in the vault.")
@click.option("--explain", is_flag=True, help="Show the grounding guard's decision and its evidence.")
@click.option(
    "--write/--quote",
    "write",
    default=None,
    help="Let the model write the answer, or quote the notes (default: as the model can; the bundled one quotes).",
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
) -> None:
    """Ask the vault a question; the answer streams with its sources."""
    from services.system import SystemClient, SystemNotRunning, build_chat_engine

    check_thread(settings, thread_id)
    client = SystemClient(settings)
    try:
        client.ensure_running()
    except SystemNotRunning as exc:
        raise click.ClickException(str(exc)) from None
    engine = build_chat_engine(settings, client=client)
    final = None
    progress = ReadingProgress()
    streamed = ""
    for event in engine.ask(" ".join(question), thread_id=thread_id, use_web=use_web, write=write):
        if event.kind == "progress":
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
        raise click.ClickException("no answer")
    if save:
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
    click.echo(f"saved {path.relative_to(settings.vault)}", err=True)


@main.command()
@click.option("--once", is_flag=True, help="Run one learner cycle now, in the foreground.")
@click.option("--note", "note_path", help="Only this note (vault-relative path): its insight and synapses.")
@click.option("--now", "now_text", help="Act as if it were this local time (ISO 8601), e.g. to replay a week.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def learn(settings: Settings, once: bool, note_path: str | None, now_text: str | None, as_json: bool) -> None:
    """Insights, synapses and the weekly synthesis: run one cycle (--once), else show the learner's state."""
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
        click.echo(f"insights and synapses {result['waiting']}")
    for path, artifact in result["processed"].items():
        click.echo(f"{path} → {artifact}")
    for path, reason in {**result["skipped"], **result["failed"]}.items():
        click.echo(f"{path}: {reason}")
    for artifact in [*result["synapses"], *filter(None, [result["synthesis"]])]:
        click.echo(f"wrote {artifact}")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
def status(settings: Settings, as_json: bool) -> None:
    """Notes indexed / skipped / failed, queue lengths and processes alive."""
    from services.llm.capability import describe
    from services.system import SystemClient

    state = SystemClient(settings).status()
    memory = memory_status_now(settings)
    if as_json:
        data = {**state.model_dump(mode="json"), "memory": memory.model_dump(mode="json")}
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    notes = state.notes
    click.echo(f"notes: {notes['indexed']} indexed, {notes['skipped']} skipped, {notes['error']} failed")
    for line in memory.lines():
        click.echo(line)
    if state.rebuild is not None:
        click.echo(state.rebuild.line())
    for reading in state.extractions:
        click.echo(reading.line())
    if state.extraction_backlog is not None:
        click.echo(state.extraction_backlog.line())
    for problem in state.problems:
        label = {"error": "failed", "skipped": "skipped"}.get(problem.status.value, "warning")
        click.echo(f"  {label}: {problem.path}: {problem.reason} → {problem.fix}")
    if state.web_url:
        click.echo(f"web UI: {state.web_url}")
    if message := state.redis_message():
        click.echo(f"system: running; {message}")
        return
    if not state.running:
        click.echo("system: not running (start it with `obsirag up`)")
        return
    for name, depth in state.queues.items():
        click.echo(f"queue {name}: {depth['pending']} pending, {depth['scheduled']} scheduled")
    for proc in state.processes:
        life = f"alive, pid {proc.pid}, up {proc.uptime:.0f}s" if proc.alive else "DEAD"
        click.echo(f"process {proc.name}: {life}")
    if (gen := state.generation) is not None:
        work = f"busy ({gen.current_request})" if gen.busy else "idle"
        speed = f", last {gen.last_tokens_per_s:.1f} tok/s" if gen.last_tokens_per_s else ""
        loaded = "loaded" if gen.loaded else "not loaded"
        click.echo(f"generation: {gen.backend} {gen.model} ({loaded}), {work}, {gen.queue_depth} queued{speed}")
        if gen.prompt_tokens_per_s:
            how = "measured" if gen.prompt_rate_measured else "estimated"
            blas = f", BLAS {gen.blas}" if gen.blas else ""
            click.echo(
                f"prompt reading: {gen.prompt_tokens_per_s:.0f} tok/s ({how}){blas}; "
                f"budget {gen.prompt_budget} prompt tokens, answers up to {gen.answer_tokens} tokens"
            )
        if gen.capability is not None:
            cap = gen.capability
            click.echo(f"writes answers: {describe(cap.can_write, cap.reason, cap.passed, cap.probes, 'en')}")


def _rebuild_notice(settings: Settings) -> str | None:
    """One line when the embedded index was built with another model: the indexer rebuilds it at start."""
    if settings.qdrant_url:
        return None  # a server's collection is checked by the indexer, which logs the advice
    from services.retrieval.store.edge_folder import recorded_model_at

    recorded = recorded_model_at(settings.store_path)
    if recorded is None or recorded.name == settings.embedding_model:
        return None
    return (
        f"The index was built with {recorded.name}: rebuilding it with {settings.embedding_model} beside the "
        "live one, which answers meanwhile (progress: `obsirag status`, the dashboard)."
    )


def run_search(settings: Settings, request: SearchRequest) -> SearchResponse:
    """Through the running indexer when there is one, else on the store opened here."""
    from services.retrieval.store.base import StoreLockedError
    from services.system import SystemNotRunning
    from services.system.offline_search import search_anywhere

    try:
        return search_anywhere(settings, request)
    except (SystemNotRunning, StoreLockedError) as exc:  # Redis restarting; `obsirag index` holding the store
        raise click.ClickException(str(exc)) from None


def _open_pipeline(settings: Settings) -> IndexPipeline:
    from services.indexing.rebuild import open_pipeline

    return open_pipeline(settings)


def _print_counts(settings: Settings) -> None:
    from services.system.client import note_counts

    counts = note_counts(settings)
    click.echo(f"{counts['indexed']} indexed, {counts['skipped']} skipped, {counts['error']} failed")


main.add_command(mcp)  # in its own module: this one is long enough
_register_memory(main, common_options)
_register_instance(main, common_options)
_register_config(main, common_options)

if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    main()
