"""``obsirag config``: the settings in force, secrets masked, each with where it came from."""

from __future__ import annotations

import json

import click

from services.config import Settings
from workers.cli_text import JSON_HELP, example, tr

SOURCES_FR = {  # the JSON keeps the English words
    "default": "défaut",
    "environment": "environnement",
    "command line or the running instance": "ligne de commande ou instance en cours",
}


def register(main: click.Group, common_options: click.decorators.FC) -> None:  # type: ignore[name-defined]
    @main.command(
        "config",
        help=tr(
            "Les réglages en vigueur et d'où vient chacun (défaut, environnement, .env, ligne de commande) ; "
            "jetons, secrets et clés d'API masqués. Référence : docs/configuration.md.",
            "The settings in force and where each came from (default, environment, .env, command line); "
            "tokens, secrets and API keys masked. Reference: docs/configuration.md.",
        ),
        epilog=example("obsirag config | grep LLM"),
    )
    @click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
    @common_options
    def config(settings: Settings, as_json: bool) -> None:
        from services.config_docs import effective_settings

        rows = effective_settings(settings)
        if as_json:
            click.echo(json.dumps([row.model_dump() for row in rows], ensure_ascii=False, indent=2))
            return
        width = max(len(row.name) for row in rows)
        for row in rows:
            source = tr(SOURCES_FR.get(row.source, row.source), row.source)
            click.echo(f"{row.name:<{width}}  {row.value or tr('(vide)', '(unset)')}  [{source}]")
