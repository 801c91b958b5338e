"""A newcomer's first hour, in one walk: every page of the sample vault's system, a question and its
follow-up, a fact remembered and a reminder confirmed from the chat, the conversation saved; then a second
vault started beside the first (its data folder chosen by the default data root, as `make run VAULT=…`
does) shows none of it. Each step's screenshot is kept under the test's temp folder."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from services.config import load_settings
from tests.browser.conftest import VIEWPORT
from tests.support.system import System, start_system, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]
QUOTE_TIMEOUT = 60_000
PAGES = [  # what the navigation offers, and each page's title
    ("/", "Interroger mon coffre"),
    ("/conversations", "Conversations"),
    ("/notes", "Notes"),
    ("/graph", "Graphe des notes"),
    ("/artifacts", "Artefacts"),
    ("/memory", "Mémoire"),
    ("/reminders", "Rappels"),
    ("/cards", "Cartes de révision"),
    ("/admin", "Tableau de bord"),
]


@dataclass
class Shots:
    folder: Path

    def take(self, page: Page, name: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(self.folder / f"{len(list(self.folder.iterdir())):02d}-{name}.png"))


def ask(page: Page, question: str, answers: int) -> None:
    page.fill("#question", question)
    page.get_by_role("button", name="Envoyer").click()
    expect(page.locator(".answer-body.final")).to_have_count(answers, timeout=QUOTE_TIMEOUT)


@pytest.fixture
def second_vault(live: System, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[System]:
    """`make run VAULT=…` after the first: another vault, its data folder picked under the same root."""
    vault = tmp_path / "second" / "vault"
    vault.mkdir(parents=True)
    (vault / "Jardin.md").write_text("# Jardin\n\nLes tomates cerises montent sur le treillis.", encoding="utf-8")
    monkeypatch.setenv("OBSIRAG_DATA_ROOT", str(live.settings.data_dir.parent))
    settings = load_settings(vault=vault).model_copy(
        update={"heartbeat_seconds": 0.5, "memory_enabled": False, "learn_enabled": False, "port": 0}
    )
    assert settings.data_dir.parent == live.settings.data_dir.parent and settings.data_dir != live.settings.data_dir
    system = start_system(settings)
    try:
        system.wait_alive(("supervisor", "indexer", "web"))
        system.wait_indexed(1)
        yield system
    finally:
        system.stop()


def test_a_newcomer_walks_every_page_asks_remembers_saves_then_opens_a_second_vault(
    ui: Page, live: System, browser: Browser, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    shots = Shots(tmp_path / "screenshots")
    for path, title in PAGES:
        ui.goto(path)
        expect(ui.locator("h1").first).to_have_text(title)
        shots.take(ui, path.strip("/") or "chat")

    ui.goto("/")
    ask(ui, "Quels sont les objectifs du projet Atlas ?", 1)
    expect(ui.locator(".answer-body.final")).to_contain_text("Les trois objectifs contractuels")
    ask(ui, "et quelle est la durée du projet ?", 2)
    expect(ui.locator(".turn").nth(1)).to_contain_text("18 mois")
    ask(ui, "retiens que je suis végétarien", 3)
    expect(ui.locator(".turn").nth(2)).to_contain_text("C'est noté : tu es végétarien")
    ask(ui, "rappelle-moi demain à 9h d'appeler Sophie", 4)
    ui.get_by_role("button", name="enregistrer le rappel").click()
    expect(ui.locator(".answer-body.final")).to_have_count(5, timeout=QUOTE_TIMEOUT)
    expect(ui.locator(".turn").nth(4)).to_contain_text("C'est enregistré (rappel #")
    ui.get_by_role("button", name="Enregistrer cette conversation").click()
    expect(ui.locator(".saved a")).to_contain_text("obsirag/conversations/")
    shots.take(ui, "conversation")
    try:
        ui.goto("/memory")
        expect(ui.locator("main")).to_contain_text("Tu es végétarien")
        ui.goto("/reminders")
        expect(ui.locator("main")).to_contain_text("appeler Sophie")
        shots.take(ui, "reminders")
        second = request.getfixturevalue("second_vault")
        walk_the_second_vault(browser, second, shots)
    finally:  # the shared system's other tests know no such fact
        ui.goto("/")
        ask(ui, "oublie que je suis végétarien", 1)
    assert len(list(shots.folder.iterdir())) == len(PAGES) + 5


def walk_the_second_vault(browser: Browser, second: System, shots: Shots) -> None:
    """Nothing of the first vault: no fact, reminder or conversation, its own note only."""
    url = wait_until(lambda: (s := second.process_state("web")) and s.details.get("url"), "the second web UI")
    page = browser.new_page(base_url=url.rstrip("/"), viewport=VIEWPORT, locale="fr-FR")
    try:
        page.goto("/memory")
        expect(page.locator("main")).not_to_contain_text("végétarien")
        shots.take(page, "second-memory")
        page.goto("/reminders")
        expect(page.locator("main")).to_contain_text("Aucun rappel à venir")
        expect(page.locator("main")).not_to_contain_text("appeler Sophie")
        page.goto("/conversations")
        expect(page.locator("main")).not_to_contain_text("projet Atlas")
        shots.take(page, "second-conversations")
        page.goto("/notes")
        expect(page.locator("#note-list li")).to_have_count(1)
        expect(page.locator("#note-list")).to_contain_text(re.compile("Jardin"))
        shots.take(page, "second-notes")
    finally:
        page.close()
