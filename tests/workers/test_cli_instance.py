"""Commands without --vault find the instance that runs (#39 point 3); ``obsirag down`` stops it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from services.config import Settings
from services.system.instance import Instance, RecordedProcess, read_instance, write_instance
from workers.cli import main


def running(root: Path, name: str, supervisor: RecordedProcess) -> Settings:
    """A vault whose data folder under ``root`` records ``supervisor`` (a live process) as its instance's."""
    vault = root / name
    vault.mkdir(parents=True)
    settings = Settings(vault=vault, data_root=root / "data")
    settings.data_dir.mkdir(parents=True)
    write_instance(Instance(vault=settings.vault, data_dir=settings.data_dir, supervisor=supervisor))
    return settings


def obsirag(root: Path, *args: str, code: int = 0) -> Result:
    env = {"OBSIRAG_DATA_ROOT": str(root / "data"), "OBSIRAG_VAULT": None, "OBSIRAG_DATA_DIR": None}
    result = CliRunner().invoke(main, list(args), env=env)
    assert result.exit_code == code, (result.output, result.exception)
    return result


@pytest.fixture
def supervisor() -> RecordedProcess:
    """A real process standing for a running supervisor (this test's own)."""
    return RecordedProcess.of("supervisor", os.getpid())


def test_status_without_vault_uses_the_one_running_instance_and_says_which(
    tmp_path: Path, supervisor: RecordedProcess
) -> None:
    settings = running(tmp_path, "Obsidian", supervisor)
    result = obsirag(tmp_path, "status", "--json")
    assert f"Coffre {settings.vault} (l'instance en cours)" in result.stderr
    assert result.stdout.startswith("{")  # --json stays JSON: the line goes to stderr
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == [settings.data_dir.name]  # none made for another
    explicit = obsirag(tmp_path, "status", "--vault", str(tmp_path / "Obsidian"))
    assert "l'instance en cours" not in explicit.stderr


def test_several_running_instances_ask_for_vault_and_none_keeps_the_default(
    tmp_path: Path, supervisor: RecordedProcess
) -> None:
    running(tmp_path, "Travail", supervisor)
    running(tmp_path, "Perso", supervisor)
    refused = obsirag(tmp_path, "search", "levain", code=2)
    assert "plusieurs coffres" in refused.stderr and "--vault" in refused.stderr
    assert "Travail" in refused.stderr and "Perso" in refused.stderr

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    gone = RecordedProcess.of("supervisor", dead.pid)
    dead.wait()
    for folder in (tmp_path / "data").iterdir():  # both stopped: their supervisor is a process that ended
        record = read_instance(folder)
        write_instance(record.model_copy(update={"supervisor": gone}))
    result = obsirag(tmp_path, "down")  # today's default vault (OBSIRAG_VAULT unset): nothing of it runs
    assert "l'instance en cours" not in result.stderr and "ObsiRAG ne tourne pas" in result.stdout
