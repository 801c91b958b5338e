"""`obsirag cards make | due | review` on a vault copy, the system not running (the rules make the cards)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import copy_sample_vault
from workers.cli import main


def test_cards_are_made_listed_and_reviewed_in_the_terminal_with_undo(tmp_path: Path) -> None:
    copy_sample_vault(tmp_path / "vault")
    where = ["--vault", str(tmp_path / "vault"), "--data", str(tmp_path / "data")]
    runner = CliRunner()
    made = json.loads(runner.invoke(main, ["cards", "make", "Lexique.md", "--json", *where]).stdout)
    assert made["method"] == "rules" and made["file"].startswith("obsirag/cards/") and len(made["cards"]) == 12
    due = json.loads(runner.invoke(main, ["cards", "due", "--json", *where]).stdout)
    assert due["due_now"] == 12
    first = due["cards"][0]["question"]
    # Enter, « 3 bien »; Enter, « 1 encore »; undo it; stop.
    session = runner.invoke(main, ["cards", "review", *where], input="\n3\n\n1\n\nu\n\nq\n")
    assert session.exit_code == 0, session.output
    assert (
        first in session.output
        and "dernière note annulée" in session.output
        and "2 carte(s) revue(s)" in session.output
    )
    after = json.loads(runner.invoke(main, ["cards", "due", "--json", *where]).stdout)
    assert after["due_now"] == 11  # the first graded « bien » waits; the second, its grade undone, is due again
    other_tag = runner.invoke(main, ["cards", "review", "--tag", "cuisine", *where], input="q\n")
    assert "0 carte(s) revue(s)" in other_tag.output  # no card of a #cuisine note is due
    missing = runner.invoke(main, ["cards", "make", "Nulle part.md", *where])
    assert missing.exit_code != 0 and "no readable note" in missing.output
