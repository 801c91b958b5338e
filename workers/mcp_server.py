"""``obsirag mcp``: the MCP server on stdin/stdout, which desktop AI clients launch (``services.mcp``)."""

from __future__ import annotations

import click

from services.config import load_settings


@click.command()
@click.option("--vault", type=click.Path(file_okay=False), help="Vault folder (default: OBSIRAG_VAULT).")
@click.option("--data", type=click.Path(file_okay=False), help="Data folder (default: OBSIRAG_DATA_DIR).")
def mcp(vault: str | None, data: str | None) -> None:
    """MCP server over stdio for AI clients (Claude Desktop, Claude Code, Cursor…); talks to `obsirag up`."""
    from services.mcp.server import run_stdio
    from services.system.startup import data_dir_problem

    settings = load_settings(vault=vault, data_dir=data)
    if problem := data_dir_problem(settings):  # another vault's data folder: its memory would answer
        raise click.ClickException(problem)
    run_stdio(settings)
