"""``obsirag config``: the settings in force, secrets masked, each with where it came from."""

from __future__ import annotations

import json

import click

from services.config import Settings


def register(main: click.Group, common_options: click.decorators.FC) -> None:  # type: ignore[name-defined]
    @main.command("config")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @common_options
    def config(settings: Settings, as_json: bool) -> None:
        """The settings in force and where each came from (default, environment, .env, command line);
        tokens, secrets and API keys masked. Reference: docs/configuration.md."""
        from services.config_docs import effective_settings

        rows = effective_settings(settings)
        if as_json:
            click.echo(json.dumps([row.model_dump() for row in rows], ensure_ascii=False, indent=2))
            return
        width = max(len(row.name) for row in rows)
        for row in rows:
            click.echo(f"{row.name:<{width}}  {row.value or '(unset)'}  [{row.source}]")
