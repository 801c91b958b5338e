"""``obsirag config``: each setting in force with its source, secrets masked (issue #38.3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from workers.cli import main


def test_config_says_where_each_setting_came_from_and_masks_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "vault").mkdir()
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("OBSIRAG_CHUNK_TOKENS=150\nOBSIRAG_MCP_TOKEN=from-dotenv\n", encoding="utf-8")
    monkeypatch.setenv("OBSIRAG_LLM_API_KEY", "sk-very-secret")
    monkeypatch.setenv("OBSIRAG_PORT", "8123")
    where = ["--vault", str(tmp_path / "vault"), "--data", str(tmp_path / "data")]
    result = CliRunner().invoke(main, ["config", "--json", *where])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: (row["value"], row["source"]) for row in json.loads(result.stdout)}
    assert rows["OBSIRAG_PORT"] == ("8123", "environment")
    assert rows["OBSIRAG_CHUNK_TOKENS"] == ("150", ".env")
    assert rows["OBSIRAG_LLM_API_KEY"] == ("********", "environment")
    assert rows["OBSIRAG_MCP_TOKEN"] == ("********", ".env")
    assert rows["OBSIRAG_LLM_TEMPERATURE"][1] == "default"
    assert rows["OBSIRAG_VAULT"] == (str(tmp_path / "vault"), "command line or the running instance")
    text = CliRunner().invoke(main, ["config", *where]).stdout
    assert "sk-very-secret" not in text and "from-dotenv" not in text and "OBSIRAG_PORT" in text
    assert len(rows) > 80
