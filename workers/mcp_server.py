"""``obsirag mcp``: the MCP server on stdin/stdout, which desktop AI clients launch (``services.mcp``)."""

from __future__ import annotations

import click

from workers.cli_options import DATA_HELP, VAULT_HELP, settings_for


@click.command()
@click.option("--vault", type=click.Path(file_okay=False), help=VAULT_HELP)
@click.option("--data", type=click.Path(file_okay=False), help=DATA_HELP)
def mcp(vault: str | None, data: str | None) -> None:
    """MCP server over stdio for AI clients (Claude Desktop, Claude Code, Cursor…); talks to `obsirag up`."""
    from services.mcp.server import run_stdio

    run_stdio(settings_for(vault, data))  # refused on another vault's data folder: its memory would answer
