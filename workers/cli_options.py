"""What every ``obsirag`` command shares: ``--vault`` and ``--data``, and a data folder of this vault only."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from services.config import Settings, SetupError, load_settings
from services.system.startup import claim_data_dir, data_dir_problem, vault_problem
from workers.cli_text import LANG, tr

FOLDER = tr("DOSSIER", "FOLDER")
VAULT_HELP = tr("Dossier du coffre (défaut : OBSIRAG_VAULT).", "Vault folder (default: OBSIRAG_VAULT).")
DATA_HELP = tr(
    "Dossier des données (défaut : OBSIRAG_DATA_DIR, sinon le dossier du coffre sous OBSIRAG_DATA_ROOT).",
    "Data folder (default: OBSIRAG_DATA_DIR, else the vault's own folder under OBSIRAG_DATA_ROOT).",
)


def common_options(command: Callable[..., Any] | None = None, *, find_running: bool = True) -> Callable[..., Any]:
    """``--vault`` and ``--data`` on every command; the command receives ``settings``. Neither given (nor
    ``OBSIRAG_VAULT`` / ``OBSIRAG_DATA_DIR``), a command works on the instance that runs, when one does
    (``find_running``: not ``up``, which starts one)."""
    if command is None:
        return lambda wrapped: common_options(wrapped, find_running=find_running)

    @click.option("--vault", type=click.Path(file_okay=False), metavar=FOLDER, help=VAULT_HELP)
    @click.option("--data", type=click.Path(file_okay=False), metavar=FOLDER, help=DATA_HELP)
    @wraps(command)
    def wrapper(vault: str | None, data: str | None, **kwargs: Any) -> Any:
        if find_running and vault is None and data is None:
            vault, data = running_instance()
        settings = settings_for(vault, data)
        try:
            return command(settings=settings, **kwargs)
        except SetupError as exc:  # a model mismatch, a missing extra: the message is the help
            raise click.ClickException(str(exc)) from None
        finally:
            claim_data_dir(settings)  # the folder the command made is this vault's from now on

    return wrapper


def settings_for(vault: str | None, data: str | None) -> Settings:
    """The settings of a command; refused when the vault is missing (before any data folder is made for it)
    or when the data folder was made for another vault."""
    settings = load_settings(vault=vault, data_dir=data)
    if problem := vault_problem(settings, LANG) or data_dir_problem(settings, LANG):
        raise click.ClickException(problem)
    return settings


def running_instance() -> tuple[str | None, str | None]:
    """The vault and data folder of the one instance running under the data root, said on stderr; (None,
    None) when the settings name a vault, or none runs; refused when several run."""
    from services.system.instance import running_instances

    settings = load_settings()
    if settings.model_fields_set & {"vault", "data_dir"}:  # OBSIRAG_VAULT / OBSIRAG_DATA_DIR: chosen already
        return None, None
    running = running_instances(settings.data_root)
    if not running:
        return None, None
    if len(running) > 1:
        vaults = ", ".join(str(instance.vault) for instance in running)
        raise click.UsageError(
            tr(
                f"ObsiRAG tourne sur plusieurs coffres ({vaults}) : précise lequel avec --vault.",
                f"ObsiRAG runs on several vaults ({vaults}): say which with --vault.",
            )
        )
    instance = running[0]
    click.echo(
        tr(f"Coffre {instance.vault} (l'instance en cours).", f"Vault {instance.vault} (the running instance)."),
        err=True,
    )
    return str(instance.vault), str(instance.data_dir)
