"""``obsirag down``: stop the system that runs a vault, from any terminal (what Ctrl-C does in ``up``'s)."""

from __future__ import annotations

import signal

import click

from services.config import Settings
from workers.cli_text import example, tr

STOP_SECONDS = 60.0  # each worker finishes its task, then Redis writes its file


def stop_instance(settings: Settings) -> str:
    """Stop this data folder's running instance, or what a dead supervisor left; the line that says so."""
    import psutil

    from services.system.instance import describe, forget_instance, read_instance, stop_processes

    instance = read_instance(settings.data_dir)
    supervisor = instance.supervisor.running() if instance is not None else None
    if instance is not None and supervisor is not None:
        supervisor.send_signal(signal.SIGINT)  # its children stop first, then Redis, then it
        try:
            supervisor.wait(STOP_SECONDS)
        except psutil.TimeoutExpired:
            supervisor.kill()  # its children die with it (services.lifeline)
        pid = instance.supervisor.pid
        return tr(
            f"ObsiRAG arrêté (superviseur pid {pid}, coffre {instance.vault}).",
            f"ObsiRAG stopped (supervisor pid {pid}, vault {instance.vault}).",
        )
    left = [child for child in instance.children if child.running()] if instance is not None else []
    if instance is not None and left:
        stop_processes([process for child in left if (process := child.running()) is not None])
        forget_instance(settings.data_dir)
        return tr(
            f"Processus laissés par un superviseur disparu, arrêtés : {describe(left)}.",
            f"Processes left by a vanished supervisor, stopped: {describe(left)}.",
        )
    return tr(
        f"ObsiRAG ne tourne pas sur {settings.vault} (données : {settings.data_dir}).",
        f"ObsiRAG is not running on {settings.vault} (data: {settings.data_dir}).",
    )


def register(main: click.Group, common_options: click.decorators.FC) -> None:  # type: ignore[name-defined]
    """Add ``down`` to ``main`` with the CLI's ``--vault`` / ``--data`` options."""

    @main.command(
        help=tr(
            "Arrête le système qui tourne sur ce coffre (trouvé sans --vault quand un seul tourne).",
            "Stop the running system of this vault (found without --vault when only one runs).",
        ),
        epilog=example("obsirag down --vault ~/Obsidian"),
    )
    @common_options
    def down(settings: Settings) -> None:
        click.echo(stop_instance(settings))
