"""« Pas sûr », then the vault learns from its user (issue #32): a paraphrase the calibration puts below the
threshold shows the closest notes' passages, each cited; opening one records the question against it; the same
question again is answered from that note; forgetting on /memory gives the old outcome back."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import screenshot
from tests.support.system import System

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]
QUOTE_TIMEOUT = 60_000
QUESTION = "Combien de riverains jardinent avec moi ?"  # shares no word with its note
POTAGER = "Projets/Potager partagé.md"


def ask(page: Page, question: str) -> None:
    page.goto("/")
    page.fill("#question", question)
    page.get_by_role("button", name="Envoyer").click()
    expect(page.locator(".answer-body.final")).to_be_visible(timeout=QUOTE_TIMEOUT)


def test_not_sure_shows_the_closest_notes_and_learns_from_the_one_opened(ui: Page, live: System) -> None:
    ask(ui, QUESTION)
    expect(ui.locator(".answer-body.final")).to_contain_text("Je n'en suis pas sûr")
    expect(ui.locator(".badge.closest")).to_have_text("pas sûr")
    expect(ui.locator(".main-note")).to_have_count(0)  # nothing given as the answer
    assert ui.locator(".sources a.source-link").count() >= 3  # several notes, each cited
    expect(ui.locator(".answer-body.final a.cite")).not_to_have_count(0)
    expect(ui.locator("details.grounding p.outcome")).to_contain_text("Pas sûr")
    screenshot(ui, "pas-sur")

    ui.locator(f'.sources a.source-link[data-path="{POTAGER}"]').click()  # opening it records the question
    ui.wait_for_url(re.compile(r"Potager"))
    ui.goto("/memory")
    expect(ui.locator("#learned-marks")).to_contain_text(QUESTION)
    expect(ui.locator("#learned-marks")).to_contain_text(POTAGER)

    ask(ui, QUESTION)  # the same question again: answered from the note its user chose
    expect(ui.locator(".badge.quoted")).to_have_text("cité de tes notes")
    expect(ui.locator(".main-note a.source-link")).to_contain_text("Potager partagé")
    expect(ui.locator("details.grounding p.outcome")).to_contain_text("tu as choisi cette note")
    screenshot(ui, "appris")

    ui.goto("/memory")
    ui.once("dialog", lambda dialog: dialog.accept())
    ui.locator(".marks-forget-all").click()
    expect(ui.locator("#learned-marks .empty")).to_be_visible()
    ask(ui, QUESTION)  # forgotten: not sure again
    expect(ui.locator(".badge.closest")).to_have_text("pas sûr")
