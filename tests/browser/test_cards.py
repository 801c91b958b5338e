"""Flashcards in a real browser (issue #36): made from the note viewer, then reviewed with the keyboard alone —
space shows the answer, 3 grades it « Bien », u undoes the grade."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.system import System

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]


def test_cards_made_from_a_note_are_reviewed_with_the_keyboard(ui: Page, live: System) -> None:
    ui.goto("/notes/Lexique.md")
    ui.get_by_role("button", name="Faire des cartes").click()
    expect(ui.locator("#cards-made")).to_contain_text("carte(s) ajoutée(s) à obsirag/cards/")
    ui.goto("/cards?note=Lexique.md")
    first = ui.locator(".flashcard").get_attribute("data-card")
    ui.keyboard.press(" ")
    expect(ui.locator(".card-answer")).to_be_visible()
    settled(ui)
    ui.keyboard.press("3")
    expect(ui.locator(".flashcard")).not_to_have_attribute("data-card", first or "")
    expect(ui.locator(".card-answer")).to_have_count(0)  # the next card, its answer hidden
    settled(ui)
    ui.keyboard.press("u")
    expect(ui.locator(".flashcard")).to_have_attribute("data-card", first or "")  # the grade undone: due again


def settled(ui: Page) -> None:
    """htmx has wired the swapped buttons (a key pressed before that finds nothing to click)."""
    expect(ui.locator("#card-panel .htmx-added, #card-panel .htmx-settling")).to_have_count(0)
