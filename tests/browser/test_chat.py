"""The chat in a real browser: a streamed answer with its sources, a stopped follow-up in the same thread,
the Markdown export, then the cited note in the viewer, a wikilink and a backlink.

One question only is answered by the model: the bundled model on two shared CPU cores takes tens of
seconds to read a prompt, so everything else reuses that answer (the follow-up is stopped at once).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import screenshot
from tests.support.system import System

pytestmark = [pytest.mark.browser, pytest.mark.timeout(1200)]
ANSWER_TIMEOUT = 600_000
QUESTION = "Quels sont les objectifs du projet Atlas ?"
# Records when each token fragment arrives (run by Playwright: the page's CSP allows no inline script).
WATCH_TOKENS = """() => {
  window.__tokens = [];
  new MutationObserver((changes) => {
    for (const change of changes)
      if (change.target.classList && change.target.classList.contains("streaming"))
        for (const node of change.addedNodes) window.__tokens.push(performance.now());
  }).observe(document.getElementById("thread"), { childList: true, subtree: true });
}"""


def ask(page: Page, question: str) -> None:
    page.fill("#question", question)
    page.get_by_role("button", name="Envoyer").click()


def test_chat_streams_cites_stops_saves_and_leads_to_the_notes(ui: Page, live: System) -> None:
    ui.goto("/")
    ui.evaluate(WATCH_TOKENS)
    ask(ui, QUESTION)
    expect(ui.locator(".turn .question")).to_have_text(QUESTION)
    expect(ui.get_by_role("button", name="Arrêter")).to_be_visible()
    answer = ui.locator(".answer-body.final")
    expect(answer).to_be_visible(timeout=ANSWER_TIMEOUT)
    assert ui.evaluate("window.__tokens.length") > 1  # streamed piece by piece, not at once
    cited = re.search(r"\[\d+\]", answer.inner_text())  # the bundled model, in 8 tokens, may cite nothing
    expect(ui.locator(".badge.prov")).to_have_text("coffre" if cited else "coffre (sans citation)")
    expect(ui.locator(".badge.model")).to_have_text("via MLX")
    main = ui.locator(".main-note a.source-link")
    expect(main).to_contain_text("Projet Atlas")
    assert ui.locator(".sources").bounding_box()["y"] < answer.bounding_box()["y"]  # main note, sources, answer
    screenshot(ui, "chat")

    thread_id = ui.locator("#thread-id").input_value()
    assert thread_id and f"thread={thread_id}" in ui.url
    ask(ui, "Et quel est son budget ?")  # a follow-up in the same thread, stopped while the model reads
    follow_up = ui.locator(".turn").nth(1)
    expect(follow_up.locator(".progress")).to_contain_text("Lecture des extraits", timeout=ANSWER_TIMEOUT)
    follow_up.get_by_role("button", name="Arrêter").click()
    expect(ui.locator(".answer-body.final")).to_have_count(2, timeout=ANSWER_TIMEOUT)
    expect(ui.locator(".turn").nth(1).locator(".badge.warn")).to_have_text("réponse interrompue")
    assert ui.locator("#thread-id").input_value() == thread_id

    ui.get_by_role("button", name="Enregistrer cette conversation").click()
    saved = ui.locator(".saved a")
    expect(saved).to_contain_text("obsirag/conversations/")
    assert QUESTION in (live.settings.vault / saved.inner_text()).read_text(encoding="utf-8")
    ui.goto("/conversations")
    expect(ui.locator(".thread-list")).to_contain_text(QUESTION)
    ui.locator(".thread-title").filter(has_text=QUESTION).click()
    expect(ui.locator(".turn")).to_have_count(2)  # reopened with both turns

    open_the_cited_note_and_follow_links(ui)


def open_the_cited_note_and_follow_links(ui: Page) -> None:
    main = ui.locator(".main-note a.source-link").first
    href = main.get_attribute("href")
    main.click()
    expect(ui).to_have_url(re.compile(r"/notes/Projets/Projet%20Atlas\.md"))
    if "#" in href:  # the cited heading is the anchor, and the page has it
        expect(ui.locator(f"[id='{href.split('#', 1)[1]}']")).to_be_attached()
    expect(ui.locator(".note-head h1")).to_have_text("Projet Atlas")
    expect(ui.locator(".mermaid-block svg")).to_be_visible()  # drawn by the vendored Mermaid
    expect(ui.locator(".embed-image")).to_be_visible()
    ui.evaluate("window.scrollTo(0, 0)")
    screenshot(ui, "note")
    ui.locator(".mermaid-block").click()
    expect(ui.locator("#mermaid-viewer svg")).to_be_visible()
    ui.get_by_role("button", name="Fermer").click()

    ui.locator('.markdown a.wikilink[data-path="Personnes/Claire Dubois.md"]').first.click()
    expect(ui.locator(".note-head h1")).to_have_text("Claire Dubois")
    ui.locator('.backlinks a[data-path="Réunions/2026-09-15 Comité de pilotage Atlas.md"]').click()
    expect(ui.locator(".note-head h1")).to_have_text("2026-09-15 Comité de pilotage Atlas")
