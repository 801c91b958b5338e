"""What the CLI refuses before any work: a missing vault, blank text, out-of-range options, an unknown thread."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from services.catalog import Catalog
from services.config import load_settings
from workers.cli import main


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("command", [["status"], ["search", "levain"], ["reminders", "list"], ["memory", "export"]])
def test_every_command_refuses_a_missing_vault_and_creates_nothing(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """They exited 0 and made a data folder for a vault that does not exist; `up` already refused."""
    monkeypatch.delenv("OBSIRAG_DATA_DIR", raising=False)
    monkeypatch.setenv("OBSIRAG_DATA_ROOT", str(tmp_path / "root"))
    result = invoke(*command, "--vault", str(tmp_path / "nowhere"))
    assert result.exit_code == 1 and result.exception is not None and not isinstance(result.exception, KeyError)
    assert f"coffre introuvable : {tmp_path / 'nowhere'}" in result.output and "OBSIRAG_VAULT" in result.output
    assert not (tmp_path / "root").exists() or not any((tmp_path / "root").iterdir())


@pytest.fixture
def where(tmp_path: Path) -> list[str]:
    (tmp_path / "vault").mkdir()
    return ["--vault", str(tmp_path / "vault"), "--data", str(tmp_path / "data")]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["-k", "-3"], "« -k » : '-3' n'est pas un nombre de 1 à 30"),
        (["-k", "0"], "« -k » : '0' n'est pas un nombre de 1 à 30"),
        (["-k", "100000"], "'100000' n'est pas un nombre de 1 à 30"),
        (["--since", "2027-01-01", "--until", "2026-01-01"], "période vide : --since 2027-01-01"),
        (["--since", "2026-01-01", "--until", "2026-01-01"], "n'est pas avant --until 2026-01-01"),
        (["--since", "2026-13-01"], "attendu AAAA-MM-JJ"),
    ],
)
def test_search_options_out_of_range_are_usage_errors(args: list[str], said: str, where: list[str]) -> None:
    result = invoke("search", "levain", *args, *where)
    assert result.exit_code == 2 and said in result.output and "Utilisation :" in result.output


@pytest.mark.parametrize("command", ["search", "ask"])
def test_blank_text_is_a_usage_error_and_no_thread_is_created(command: str, where: list[str], tmp_path: Path) -> None:
    result = invoke(command, "  ", *where)
    assert result.exit_code == 2 and "Erreur : valeur invalide pour « " in result.output and " : vide" in result.output
    with Catalog(load_settings(vault=tmp_path / "vault", data_dir=tmp_path / "data").catalog_path) as catalog:
        assert catalog.list_threads() == []


def test_an_unknown_thread_is_one_french_line(where: list[str]) -> None:
    """It ended in a traceback: KeyError: "no conversation 'doesnotexist'"."""
    result = invoke("ask", "et la durée ?", "--thread", "doesnotexist", *where)
    assert result.exit_code == 2 and not isinstance(result.exception, KeyError)
    assert (
        result.output.startswith("Erreur : Conversation inconnue : doesnotexist (") and result.output.count("\n") == 1
    )
