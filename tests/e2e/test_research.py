"""Research mode through the running system (the session's shared ``obsirag up``): ``obsirag ask --research``
prints its steps on stderr, gives them under ``steps`` with ``--json`` (``sources`` kept), and ``--save`` keeps
the research as a note the running system indexes and ``obsirag search`` finds (issue #35)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner, Result

from tests.support.system import System, wait_until
from workers.cli import main

pytestmark = pytest.mark.e2e
QUESTION = "Quel est le rôle de Claire et de Marc dans Atlas ?"
CLAIRE, MARC = "Personnes/Claire Dubois.md", "Personnes/Marc Lefèvre.md"


def obsirag(live: System, *args: str) -> Result:
    where = ["--vault", str(live.settings.vault), "--data", str(live.settings.data_dir)]
    result = CliRunner().invoke(main, [*args, *where])
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def test_ask_research_shows_its_steps_answers_from_both_notes_and_saves_a_searchable_note(live: System) -> None:
    vault = live.settings.vault
    before = {p: p.read_bytes() for p in vault.rglob("*.md")}
    result = obsirag(live, "ask", "--research", "--save", "--json", QUESTION)
    answer = json.loads(result.stdout)
    assert answer["kind"] == "quoted" and {CLAIRE, MARC} <= {s["path"] for s in answer["sources"]}
    assert [s["kind"] for s in answer["steps"]] == ["plan", "search", "search", "answer"]
    assert [sub["text"] for sub in answer["research"]] == [
        "Quel est le rôle de Claire dans Atlas ?",
        "Quel est le rôle de Marc dans Atlas ?",
    ]
    for step in answer["steps"]:
        assert step["text"] in result.stderr  # shown as they happened, on stderr
    saved = result.stderr.split("recherche enregistrée : ", 1)[1].strip()
    assert saved.startswith("obsirag/research/")
    text = (vault / saved).read_text(encoding="utf-8")
    assert "[[Personnes/Claire Dubois|" in text and "[[Personnes/Marc Lefèvre|" in text
    assert all(p.read_bytes() == data for p, data in before.items())  # no note of the user's touched

    def found() -> bool:
        hits = json.loads(obsirag(live, "search", "--json", "rôle de Claire et de Marc dans Atlas").stdout)
        return saved in [hit["path"] for hit in hits]

    wait_until(found, "the saved research note in `obsirag search`")
