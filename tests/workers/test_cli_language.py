"""One language for the whole CLI (#39.6): French by default, as the web UI; English with OBSIRAG_LANGUAGE=en.

Every command's help is walked in both languages (click writes it when the commands are declared, so the
English one runs in its own interpreter), and a few of what the commands say: status, a refusal, a usage error.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from workers.cli import main

ROOT = Path(__file__).resolve().parents[2]
ENGLISH = re.compile(r"\b(the|and|with|from|of|this|Show|Usage|Commands|default:|TEXT|INTEGER|DIRECTORY)\b")
FRENCH = re.compile(r"\b(le|la|les|des|du|une|avec|dans|Utilisation|Commandes|Affiche|défaut|DOSSIER)\b")
HELP_SCRIPT = """
import click
import pytest
from click.testing import CliRunner
from workers.cli import main
def walk(command, path):
    yield path
    for name, sub in getattr(command, "commands", {}).items():
        yield from walk(sub, [*path, name])
for path in walk(main, []):
    print(CliRunner().invoke(main, [*path, "--help"], prog_name="obsirag").output)
"""


def every_path(command: click.Command, path: list[str]) -> Iterator[list[str]]:
    yield path
    for name, sub in getattr(command, "commands", {}).items():
        yield from every_path(sub, [*path, name])


def command_at(path: list[str]) -> click.Command:
    command: click.Command = main
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return command


def test_every_help_page_is_french_by_default() -> None:
    paths = list(every_path(main, []))
    assert len(paths) >= 20  # every command and sub-command, the groups too
    for path in paths:
        text = CliRunner().invoke(main, [*path, "--help"], prog_name="obsirag").output
        assert text.startswith("Utilisation : obsirag") and "Affiche cette aide" in text, path
        assert not ENGLISH.findall(text), (path, ENGLISH.findall(text), text)
        if not isinstance(command_at(path), click.Group):  # every command shows one example of its use
            assert "Exemple : " in text and f"obsirag {' '.join(path)}" in text.split("Exemple : ")[1], path


def test_every_help_page_is_english_when_asked(tmp_path: Path) -> None:
    env = {**os.environ, "OBSIRAG_LANGUAGE": "en", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", HELP_SCRIPT], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    pages = done.stdout.split("Usage: obsirag")
    assert len(pages) > 20 and "Show this message and exit." in done.stdout
    assert done.stdout.count("Example: obsirag ") >= 17  # one per command
    # Names (Profil.md, obsirag/conversations/) and the user's own words aside, no French sentence.
    found = FRENCH.findall(done.stdout.replace("rappelle-moi", ""))
    assert not found, found


def test_what_the_commands_say_follows_the_language(tmp_path: Path) -> None:
    (tmp_path / "vault").mkdir()
    where = ["--vault", str(tmp_path / "vault"), "--data", str(tmp_path / "data")]
    said = CliRunner().invoke(main, ["status", *where]).output
    assert "notes : 0 indexées, 0 ignorées, 0 en échec" in said and "système : arrêté" in said
    refused = CliRunner().invoke(main, ["search", "levain", "-k", "0", *where]).output
    assert "Utilisation : " in refused and "Erreur : valeur invalide pour « -k »" in refused

    english = {**os.environ, "OBSIRAG_LANGUAGE": "en", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "workers.cli"]
    status = subprocess.run([*command, "status", *where], env=english, capture_output=True, text=True, cwd=ROOT)
    assert "notes: 0 indexed, 0 skipped, 0 failed" in status.stdout and "system: not running" in status.stdout
    missing = subprocess.run(
        [*command, "search", "x", "--vault", str(tmp_path / "nowhere")], env=english, capture_output=True, text=True
    )
    assert missing.returncode == 1 and missing.stderr.startswith("Error: vault not found: "), missing.stderr


def test_a_running_systems_status_names_its_processes_and_queues_in_french(capsys: pytest.CaptureFixture[str]) -> None:
    from services.memory.status import MemoryStatus
    from services.system.client import SystemStatus
    from services.system.processes import ProcessState
    from workers.cli_status import print_status

    state = SystemStatus(
        running=True,
        notes={"indexed": 3, "skipped": 0, "error": 0},
        queues={"index": {"pending": 2, "scheduled": 0}, "extract": {"pending": 0, "scheduled": 1}},
        processes=[
            ProcessState(name="indexer", pid=41, started_at=0.0, heartbeat_at=12.0, alive=True),
            ProcessState(name="extractor", pid=0, started_at=0.0, heartbeat_at=0.0, alive=False),
        ],
    )
    now = datetime(2026, 12, 4, 9, 0).astimezone()
    print_status(state, MemoryStatus(next_consolidation=now, next_briefing=now))
    said = capsys.readouterr().out
    assert "file indexation : 2 en attente, 0 programmées" in said
    assert "file extraction des documents : 0 en attente, 1 programmées" in said
    assert (
        "processus indexation : vivant, pid 41, depuis 12 s" in said
        and "processus extracteur de documents : MORT" in said
    )
