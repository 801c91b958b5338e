"""Answers through the running system (the session's shared ``obsirag up``, ``tests/live.py``): the README's
question quoted by ``obsirag ask --json`` with the bundled model, and memory used while the assistant's own
saved words are never evidence.

The CLI runs in this process (a fresh interpreter per command costs seconds on a loaded machine); it talks to
the running indexer and generation worker through Redis, as the installed command does.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from tests.support.system import System, wait_until
from workers.cli import main

pytestmark = pytest.mark.e2e
VEGETARIAN = "Tu es végétarien"  # the fact as /memory and the answer show it (services/memory/wording.py)


def obsirag(live: System, *args: str) -> Any:
    """``obsirag ARGS`` against the live system, its JSON parsed (``--json`` added, but to ``memory export``)."""
    where = ["--vault", str(live.settings.vault), "--data", str(live.settings.data_dir)]
    as_json = [] if args[0] == "memory" else ["--json"]
    result = CliRunner().invoke(main, [*args, *as_json, *where])
    assert result.exit_code == 0, (result.output, result.exception)
    return json.loads(result.stdout)


def test_ask_json_quotes_the_readme_question_and_its_follow_up_without_a_model(live: System, live_url: str) -> None:
    capability = obsirag(live, "status")["generation"]["capability"]
    assert capability["can_write"] is False and capability["reason"] == "bundled"
    assert "trop petit pour rédiger" in httpx.get(live_url.rstrip("/") + "/admin/live", timeout=30).text

    answer = obsirag(live, "ask", "Quels sont les objectifs du projet Atlas ?")
    assert answer["kind"] == "quoted" and answer["main_note"] == "Projets/Projet Atlas.md" and answer["cited"]
    assert answer["answer"].startswith("D'après tes notes :\n\n> Les trois objectifs contractuels")
    assert "**Former 40 agents" in answer["answer"] and "— Projet Atlas › Objectifs [1]" in answer["answer"]
    assert answer["sources"][0]["heading"] == "Projet Atlas > Objectifs" and answer["sources"][0]["primary"]
    assert "first_token_ms" not in answer["timings"]  # whole without a model call
    follow = obsirag(live, "ask", "et quelle est la durée du projet ?", "--thread", answer["thread_id"])
    assert follow["kind"] == "quoted" and "Le projet dure **18 mois**" in follow["answer"]
    english = obsirag(live, "ask", "What did I note about permaculture?")
    assert english["kind"] == "quoted" and english["answer"].startswith("From your notes:\n\n> ")


def test_a_saved_conversation_s_confirmations_never_answer_and_the_fact_they_noted_is_used(live: System) -> None:
    """« retiens que je suis végétarien », a reminder confirmed, the thread saved into the vault and indexed:
    the cooking questions are then answered from the cooking notes, the fact shown as « mémoire utilisée »."""
    noted = obsirag(live, "ask", "retiens que je suis végétarien")
    assert noted["kind"] == "memory" and "C'est noté : tu es végétarien" in noted["answer"]
    facts = obsirag(live, "memory", "export")
    assert any(f["status"] == "confirmed" and f["value"] == "végétarien" for f in facts)  # as /memory shows it
    thread = ["--thread", noted["thread_id"]]
    asked = obsirag(live, "ask", "rappelle-moi demain à 9h d'appeler Sophie", *thread)
    assert asked["kind"] == "memory" and asked["answer"].endswith("Je l'enregistre ?")
    saved = obsirag(live, "ask", "oui", *thread, "--save")
    assert saved["answer"].startswith("C'est enregistré (rappel #")
    conversations = live.settings.vault / "obsirag" / "conversations"
    export = wait_until(lambda: next(conversations.rglob("*.md"), None), "the saved conversation")
    path = export.relative_to(live.settings.vault).as_posix()
    wait_until(lambda: path in indexed_paths(live), "the saved conversation indexed")
    try:
        for question in ("que cuisiner ce soir, sans viande ?", "que pourrais-je cuisiner ce soir ?"):
            answer = obsirag(live, "ask", question)
            assert answer["kind"] in ("quoted", "closest"), answer  # « pas sûr » shows the memory too
            cited = [answer["main_note"]] if answer["kind"] == "quoted" else [s["path"] for s in answer["sources"]]
            assert any(path.startswith("Cuisine/") for path in cited), answer
            assert not [s for s in answer["sources"] if "conversations/" in s["path"]], answer["sources"]
            assert "C'est noté" not in answer["answer"] and "Je l'enregistre" not in answer["answer"]
            assert VEGETARIAN in [m["text"] for m in answer["memory"]], (question, answer["memory"])
    finally:  # the shared system's other tests know no such fact
        obsirag(live, "ask", "oublie que je suis végétarien")


def indexed_paths(live: System) -> set[str]:
    from services.catalog import Catalog

    with Catalog(live.settings.catalog_path) as catalog:
        return {note.path for note in catalog.list_notes()}
