"""``obsirag remind``, ``reminders``, ``memory export / forget / confirm / run``, ``learn`` (no system running)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from workers.cli import main


def cli(tmp_path: Path, *args: str, stdin: str | None = None) -> str:
    return run(tmp_path, *args, stdin=stdin).output


def run(tmp_path: Path, *args: str, stdin: str | None = None) -> Result:
    where = ["--vault", str(tmp_path / "vault"), "--data", str(tmp_path / "data")]
    result = CliRunner().invoke(main, [*args, *where], input=stdin, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_reminders_from_the_shell(tmp_path: Path) -> None:
    (tmp_path / "vault").mkdir()
    now = ["--now", "2026-01-01T12:00:00+01:00"]
    said = cli(tmp_path, "remind", "dans", "3", "semaines", "de", "relancer", "Sophie", *now, stdin="n\n")
    assert "le jeudi 22 janvier 2026 à 09:00 : relancer Sophie" in said and "Rien d’enregistré." in said
    none = run(tmp_path, "reminders", "list")
    assert (none.stdout, none.stderr) == ("", "Aucun rappel actif.\n")  # said, outside what a script reads
    assert "rappel n° 1 enregistré" in cli(tmp_path, "remind", "rappelle-moi demain de payer", *now, stdin="\n")
    status = cli(tmp_path, "status")  # the reminder was asked for in 2026 (status reads the clock): due now
    assert "rappels : 1 dus" in status and "mémoire : 0 faits, 0 en attente" in status
    assert json.loads(cli(tmp_path, "status", "--json"))["memory"]["reminders_due"] == 1
    listed = json.loads(cli(tmp_path, "reminders", "list", "--json", "--due", "--now", "2026-01-03T00:00:00+01:00"))
    assert [(r["id"], r["text"], r["flagged"]) for r in listed] == [(1, "payer", False)]
    for _ in range(3):
        snoozed = cli(tmp_path, "reminders", "snooze", "1")
    assert "⚠ repoussé 3 fois" in snoozed
    assert cli(tmp_path, "reminders", "done", "1").startswith("fait : payer")


@pytest.mark.parametrize(
    ("answers", "saved"),
    [("o\n", True), ("oui\n", True), ("Y\n", True), ("yes\n", True), ("OUI \n", True),
     ("non\n", False), ("no\n", False), ("n\n", False), ("peut-être\nj\noui\n", True), ("quoi\nnon\n", False)],
)  # fmt: skip
def test_remind_takes_a_yes_or_a_no_in_either_language(tmp_path: Path, answers: str, saved: bool) -> None:
    (tmp_path / "vault").mkdir()
    said = run(tmp_path, "remind", "rappelle-moi demain de payer", "--now", "2026-01-01T12:00:00+01:00", stdin=answers)
    assert ("rappel n° 1 enregistré" in said.stdout) is saved and ("Rien d’enregistré." in said.stdout) is not saved
    assert said.stdout.count("Enregistrer ? [O/n]") == answers.count("\n")  # asked again after a word it cannot take
    assert said.stderr.count("Réponds o (oui) ou n (non).") == answers.count("\n") - 1


def test_remind_in_english_asks_in_english_and_errors_are_french(tmp_path: Path) -> None:
    (tmp_path / "vault").mkdir()
    said = run(tmp_path, "remind", "remind me tomorrow to pay", "--now", "2026-01-01T12:00:00+01:00", stdin="y\n")
    assert "Save? [Y/n]" in said.stdout and "rappel n° 1 enregistré" in said.stdout
    where = ["--vault", str(tmp_path / "vault"), "--data", str(tmp_path / "data")]
    for args, error in [
        (["remind", "quelque chose sans date"], "aucun moment compris"),
        (["reminders", "done", "42"], "aucun rappel n° 42"),
        (["memory", "forget", "7"], "aucun fait n° 7"),
    ]:
        failed = CliRunner().invoke(main, [*args, *where])
        assert failed.exit_code == 1 and f"Error: {error}" not in failed.output and error in failed.output, (
            failed.output
        )


def test_memory_export_forget_confirm_and_run(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\n- [ ] une tâche\n", encoding="utf-8")
    from services.catalog import Catalog
    from services.config import Settings
    from services.memory.assistant import ChatMemory

    settings = Settings(vault=vault, data_dir=tmp_path / "data")
    with Catalog(settings.catalog_path) as catalog:
        ChatMemory(settings, catalog).reply("retiens que je préfère le thé vert", "t1", "fr", _now())
    [fact] = json.loads(cli(tmp_path, "memory", "export"))
    assert (fact["value"], fact["source"], fact["status"]) == ("le thé vert", "chat", "confirmed")
    ran = json.loads(cli(tmp_path, "memory", "run", "--json", "--now", "2026-12-01T12:00:00+01:00"))
    assert ran["consolidation"] is None and ran["profile"]["written"] and ran["briefing"].startswith("obsirag/")
    assert "- je préfère : le thé vert" in (vault / "obsirag" / "assistant" / "Profil.md").read_text(encoding="utf-8")
    assert "fait n° 1 oublié" in cli(tmp_path, "memory", "forget", "1")
    assert json.loads(cli(tmp_path, "memory", "export"))[0]["status"] == "rejected"
    assert "fait n° 1 confirmé" in cli(tmp_path, "memory", "confirm", "1", "--value", "le thé blanc")
    assert json.loads(cli(tmp_path, "memory", "export"))[0]["value"] == "le thé blanc"
    assert (vault / "Note.md").read_text(encoding="utf-8") == "# Note\n\n- [ ] une tâche\n"
    learner = json.loads(cli(tmp_path, "learn", "--json"))  # no worker: the settings say the model cannot write
    assert learner["waiting"].startswith("waiting for a model that can write: the bundled model")


def _now():  # type: ignore[no-untyped-def]
    from datetime import datetime

    return datetime(2026, 12, 1, 12, 0).astimezone()


def test_an_impossible_or_past_day_is_asked_about_never_saved(tmp_path: Path) -> None:
    """These ended in a traceback (31 février), or were saved a day late and due at once (a past day)."""
    (tmp_path / "vault").mkdir()
    where = ["--vault", str(tmp_path / "vault"), "--data", str(tmp_path / "data")]
    now = ["--now", "2026-12-01T12:05:00"]
    asked = {
        "le 31 février de relancer Claire": "Le 31 février n'existe pas : pour quel jour veux-tu ce rappel",
        "on February 30 to call Bob": "There is no February 30: which day do you want this reminder (“call Bob”)",
        "le 3 janvier 2020 à 9h de payer la facture": "Le vendredi 3 janvier 2020 à 09:00 est déjà passé",
        "hier à 9h de relancer Marc": "Le lundi 30 novembre 2026 à 09:00 est déjà passé",
    }
    for request, question in asked.items():
        result = CliRunner().invoke(main, ["remind", request, "--yes", *now, *where])
        assert result.exit_code == 1 and result.exception is not None and type(result.exception) is SystemExit
        assert question in result.output and "saved" not in result.output, result.output
    assert run(tmp_path, "reminders", "list").stdout == ""
