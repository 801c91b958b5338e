"""Every page at a phone's width (390 px): no horizontal scroll, and the search placeholders are not cut."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import ARTIFACTS
from tests.browser.test_pages import PLACEHOLDER_FITS
from tests.support.system import System

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]
PHONE = {"width": 390, "height": 844}
PAGES = [
    ("/", "Interroger mon coffre"),
    ("/conversations", "Conversations"),
    ("/notes", "Notes"),
    ("/notes/Tech/Obsidian%20-%20mon%20organisation.md", "Obsidian - mon organisation"),
    ("/graph", "Graphe des notes"),
    ("/artifacts", "Artefacts"),
    ("/admin", "Tableau de bord"),
    ("/memory", None),
    ("/reminders", None),
]
# The outermost elements sticking out past the right edge (not those inside a scrolling box), named, so that
# a failure says what to fix.
WIDEST = """() => [...document.querySelectorAll("body *")]
    .filter(e => e.getBoundingClientRect().right > innerWidth + 1)
    .filter(e => !e.parentElement.closest("table, pre, [style*=overflow]"))
    .slice(0, 6).map(e => `${e.localName}.${e.className}: ${Math.round(e.getBoundingClientRect().right)}`)"""


def test_every_page_fits_a_phone(ui: Page, live: System) -> None:
    ui.set_viewport_size(PHONE)
    for path, heading in PAGES:
        ui.goto(path)
        if heading:
            expect(ui.locator("h1").first).to_have_text(heading)
        ui.wait_for_load_state("networkidle")  # HTMX panels (the dashboard's live part) are in
        width = ui.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"] + 1:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            (ARTIFACTS / "phone-overflow.html").write_text(ui.content(), encoding="utf-8")
        assert width <= PHONE["width"] + 1, f"{path} is {width} px wide at 390 px: {ui.evaluate(WIDEST)}"
        for field in ui.locator("input[type=search]:visible").all():
            cut = field.evaluate("i => i.scrollWidth > i.clientWidth") or not field.evaluate(PLACEHOLDER_FITS)
            assert not cut, f"{path}: the placeholder « {field.get_attribute('placeholder')} » is cut at 390 px"
