"""``obsirag mcp``: the MCP server on stdin/stdout, which desktop AI clients launch (``services.mcp``)."""

from __future__ import annotations

import click

from workers.cli_options import DATA_HELP, FOLDER, VAULT_HELP, settings_for
from workers.cli_text import Command, example, tr


@click.command(
    cls=Command,
    help=tr(
        "Serveur MCP sur stdio pour les clients d'IA (Claude Desktop, Claude Code, Cursor…) ; parle à `obsirag up`.",
        "MCP server over stdio for AI clients (Claude Desktop, Claude Code, Cursor…); talks to `obsirag up`.",
    ),
    epilog=example(
        tr(
            "obsirag mcp --vault ~/Obsidian   (lancé par Claude Desktop, Cursor…)",
            "obsirag mcp --vault ~/Obsidian   (launched by Claude Desktop, Cursor…)",
        )
    ),
)
@click.option("--vault", type=click.Path(file_okay=False), metavar=FOLDER, help=VAULT_HELP)
@click.option("--data", type=click.Path(file_okay=False), metavar=FOLDER, help=DATA_HELP)
def mcp(vault: str | None, data: str | None) -> None:
    from services.mcp.server import run_stdio

    run_stdio(settings_for(vault, data))  # refused on another vault's data folder: its memory would answer
