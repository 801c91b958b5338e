"""The MCP server with no system running: tools that need it say so in one line, notes still read.

In process through the official client's in-memory transport (the server is the one ``obsirag mcp`` runs
over stdio; a subprocess would only add its ~10 s of imports to the suite).
"""

from __future__ import annotations

from pathlib import Path

from anyio.from_thread import start_blocking_portal
from mcp import Client

from services.config import Settings
from services.mcp.server import build_server
from services.mcp.tools import VaultTools
from tests.conftest import copy_sample_vault

NOT_RUNNING = "ObsiRAG is not running: start it with `obsirag up` (or `make run`)"


def test_without_the_system_tools_say_it_is_not_running_in_one_line(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    copy_sample_vault(vault)
    tools = VaultTools(Settings(vault=vault, data_dir=tmp_path / "data"))

    async def calls() -> tuple[list[str], str]:
        async with Client(build_server(tools)) as client:
            errors = []
            for tool, arguments in [("search", {"query": "Atlas"}), ("ask", {"question": "Atlas ?"})]:
                result = await client.call_tool(tool, arguments)
                assert result.is_error
                errors.append(result.content[0].text)
            note = await client.call_tool("read_note", {"path": "Projets/Projet Atlas.md", "heading": "Objectifs"})
            assert not note.is_error, note.content[0].text
            return errors, note.structured_content["body"]

    try:  # the loop in a thread of its own: Playwright's sync API may hold this thread's loop
        with start_blocking_portal() as portal:
            errors, body = portal.call(calls)
    finally:
        tools.close()
    assert all(error.endswith(NOT_RUNNING) and "\n" not in error for error in errors), errors
    assert body.strip()  # the vault is read without the system
