"""``obsirag mcp`` with no system running: tools that need it say so in one line, notes still read."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from services.config import Settings
from tests.conftest import SAMPLE_VAULT
from tests.e2e.conftest import system_env
from tests.live import ROOT

NOT_RUNNING = "ObsiRAG is not running: start it with `obsirag up` (or `make run`)"


def test_without_the_system_tools_say_it_is_not_running_in_one_line(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    settings = Settings(vault=vault, data_dir=tmp_path / "data")
    args = ["-m", "workers.cli", "mcp", "--vault", str(vault), "--data", str(settings.data_dir)]
    server = StdioServerParameters(command=sys.executable, args=args, env=system_env(settings), cwd=ROOT)

    async def calls() -> tuple[list[str], str]:
        async with Client(server) as client:
            errors = []
            for tool, arguments in [("search", {"query": "Atlas"}), ("ask", {"question": "Atlas ?"})]:
                result = await client.call_tool(tool, arguments)
                assert result.is_error
                errors.append(result.content[0].text)
            note = await client.call_tool("read_note", {"path": "Projets/Projet Atlas.md", "heading": "Objectifs"})
            assert not note.is_error, note.content[0].text
            return errors, note.structured_content["body"]

    errors, body = anyio.run(calls)
    assert all(error.endswith(NOT_RUNNING) and "\n" not in error for error in errors), errors
    assert body.strip()  # the vault is read without the system
