"""What ``obsirag status`` prints, in the CLI's language: the notes, memory, documents being read, problems,
then (the system running) the queues, the processes and the generation worker."""

from __future__ import annotations

from typing import Any

import click

from services.catalog.problems import reason_in
from services.system.processes import FRENCH_NAMES
from services.system.queues import FRENCH_QUEUE_NAMES
from workers.cli_text import LANG, tr

PROBLEM_LABELS = {"error": tr("en échec", "failed"), "skipped": tr("ignoré", "skipped")}


def print_status(state: Any, memory: Any) -> None:
    """``state``: the ``SystemStatus`` (read in the CLI's language), ``memory``: the ``MemoryStatus``."""
    notes = state.notes
    click.echo(
        tr(
            f"notes : {notes['indexed']} indexées, {notes['skipped']} ignorées, {notes['error']} en échec",
            f"notes: {notes['indexed']} indexed, {notes['skipped']} skipped, {notes['error']} failed",
        )
    )
    for line in memory.lines(LANG):
        click.echo(line)
    _documents_and_problems(state)
    if state.web_url:
        click.echo(tr(f"interface web : {state.web_url}", f"web UI: {state.web_url}"))
    if message := state.redis_message(LANG):
        click.echo(tr(f"système : lancé ; {message}", f"system: running; {message}"))
        return
    if not state.running:
        click.echo(
            tr("système : arrêté (lance-le avec `obsirag up`)", "system: not running (start it with `obsirag up`)")
        )
        return
    _queues_and_processes(state)
    if state.generation is not None:
        _generation(state.generation)


def _documents_and_problems(state: Any) -> None:
    if state.sync is not None:
        click.echo(state.sync.line(LANG))
    if state.rebuild is not None:
        click.echo(state.rebuild.line(LANG))
    for reading in state.extractions:
        click.echo(reading.line(LANG))
    if state.extraction_backlog is not None:
        click.echo(state.extraction_backlog.line(LANG))
    for view in state.connectors:
        click.echo(_connector_line(view))
    for problem in state.problems:
        label = PROBLEM_LABELS.get(problem.status.value, tr("attention", "warning"))
        reason = reason_in(problem.reason, LANG)
        click.echo(tr(f"  {label} : {problem.path} : ", f"  {label}: {problem.path}: ") + f"{reason} → {problem.fix}")


def _connector_line(view: Any) -> str:
    status = view.status
    head = tr(f"source {view.id} ({view.kind_label}) : ", f"source {view.id} ({view.kind}): ")
    if status.state == "error":
        return head + f"{status.error} → {status.fix}"  # French, as the page shows it: the fix is in the words
    if status.state == "paused" or view.paused:
        return head + tr("en pause", "paused")
    if status.last_sync is None:
        return head + tr("pas encore synchronisée", "not synced yet")
    when = f"{status.last_sync.astimezone():%Y-%m-%d %H:%M}"
    return head + tr(f"{status.items} élément(s), synchronisée le {when}", f"{status.items} item(s), synced {when}")


def _queues_and_processes(state: Any) -> None:
    for name, depth in state.queues.items():
        click.echo(
            tr(
                f"file {FRENCH_QUEUE_NAMES.get(name, name)} : {depth['pending']} en attente, "
                f"{depth['scheduled']} programmées",
                f"queue {name}: {depth['pending']} pending, {depth['scheduled']} scheduled",
            )
        )
    for proc in state.processes:
        if proc.alive:
            life = tr(
                f"vivant, pid {proc.pid}, depuis {proc.uptime:.0f} s", f"alive, pid {proc.pid}, up {proc.uptime:.0f}s"
            )
        else:
            life = tr("MORT", "DEAD")
        click.echo(tr(f"processus {FRENCH_NAMES.get(proc.name, proc.name)} : {life}", f"process {proc.name}: {life}"))


def _generation(gen: Any) -> None:
    from services.llm.capability import describe

    work = tr(f"occupé ({gen.current_request})", f"busy ({gen.current_request})") if gen.busy else tr("libre", "idle")
    speed = (
        tr(", dernière réponse à", ", last") + f" {gen.last_tokens_per_s:.1f} tok/s" if gen.last_tokens_per_s else ""
    )
    loaded = tr("chargé", "loaded") if gen.loaded else tr("non chargé", "not loaded")
    queued = tr(f"{gen.queue_depth} en attente", f"{gen.queue_depth} queued")
    click.echo(tr("génération :", "generation:") + f" {gen.backend} {gen.model} ({loaded}), {work}, {queued}{speed}")
    if gen.prompt_tokens_per_s:
        how = tr("mesurée", "measured") if gen.prompt_rate_measured else tr("estimée", "estimated")
        blas = f", BLAS {gen.blas}" if gen.blas else ""
        click.echo(
            tr(
                f"lecture du prompt : {gen.prompt_tokens_per_s:.0f} tok/s ({how}){blas} ; budget {gen.prompt_budget} "
                f"jetons de prompt, réponses jusqu'à {gen.answer_tokens} jetons",
                f"prompt reading: {gen.prompt_tokens_per_s:.0f} tok/s ({how}){blas}; "
                f"budget {gen.prompt_budget} prompt tokens, answers up to {gen.answer_tokens} tokens",
            )
        )
    if gen.capability is not None:
        cap = gen.capability
        verdict = describe(cap.can_write, cap.reason, cap.passed, cap.probes, LANG)
        click.echo(tr(f"rédige les réponses : {verdict}", f"writes answers: {verdict}"))
