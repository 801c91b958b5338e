"""What every ``obsirag`` command shares: ``--vault`` and ``--data``, and a data folder of this vault only."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from services.config import Settings, SetupError, load_settings
from services.system.startup import claim_data_dir, data_dir_problem, vault_problem

VAULT_HELP = "Vault folder (default: OBSIRAG_VAULT)."
DATA_HELP = "Data folder (default: OBSIRAG_DATA_DIR, else the vault's own folder under OBSIRAG_DATA_ROOT)."


def common_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--vault`` and ``--data`` on every command; the command receives ``settings``."""

    @click.option("--vault", type=click.Path(file_okay=False), help=VAULT_HELP)
    @click.option("--data", type=click.Path(file_okay=False), help=DATA_HELP)
    @wraps(command)
    def wrapper(vault: str | None, data: str | None, **kwargs: Any) -> Any:
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
    if problem := vault_problem(settings) or data_dir_problem(settings):
        raise click.ClickException(problem)
    return settings
