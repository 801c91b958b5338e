"""The chat in a real browser: the default answer quoted from the notes at once with its citation, a
follow-up in the same thread, a question the model is asked to write (stopped while it reads), the Markdown
export, then the cited note in the viewer, a wikilink and a backlink.

With the bundled model the chat quotes the notes (no model call): only the third question reaches the model,
and it is stopped while the model reads, so the test waits for no model answer.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import screenshot
from tests.support.system import System

pytestmark = [pytest.mark.browser, pytest.mark.timeout(1200)]
ANSWER_TIMEOUT = 600_000
QUOTE_TIMEOUT = 60_000  # a search and a few sentences embedded by the indexer, on a loaded machine
QUESTION = "Quels sont les objectifs du projet Atlas ?"


def ask(page: Page, question: str) -> None:
    page.fill("#question", question)
    page.get_by_role("button", name="Envoyer").click()


def test_chat_quotes_writes_on_request_stops_saves_and_leads_to_the_notes(ui: Page, live: System) -> None:
    ui.goto("/")
    ask(ui, QUESTION)
    expect(ui.locator(".turn .question")).to_have_text(QUESTION)
    answer = ui.locator(".answer-body.final")
    expect(answer).to_be_visible(timeout=QUOTE_TIMEOUT)
    expect(answer).to_contain_text("Les trois objectifs contractuels")
    expect(answer).to_contain_text("Former 40 agents de la Métropole")
    expect(answer.locator("a.cite").first).to_have_attribute("href", re.compile(r"Projet%20Atlas\.md#"))
    expect(ui.locator(".badge.quoted")).to_have_text("cité de tes notes")
    expect(ui.locator(".badge.prov")).to_have_text("coffre")  # it cites [1]
    expect(ui.locator(".badge.model")).to_have_count(0)  # no model wrote it
    expect(ui.locator(".quoted-label")).to_contain_text("tableau par plateforme du README")
    main = ui.locator(".main-note a.source-link")
    expect(main).to_contain_text("Projet Atlas")
    expect(main).to_contain_text("Objectifs")
    assert ui.locator(".sources").bounding_box()["y"] < answer.bounding_box()["y"]  # main note, sources, answer
    # The README's picture: the question on top, under the page's header, then the main note and the answer.
    ui.evaluate("document.querySelector('.turn').scrollIntoView({block: 'start'}); window.scrollBy(0, -80)")
    screenshot(ui, "chat", above="#composer")  # the thread; the composer names the tests' stand-in web engine

    thread_id = ui.locator("#thread-id").input_value()
    assert thread_id and f"thread={thread_id}" in ui.url
    ask(ui, "et quelle est la durée du projet ?")  # a follow-up, quoted from the duration's passage
    expect(ui.locator(".answer-body.final")).to_have_count(2, timeout=QUOTE_TIMEOUT)
    expect(ui.locator(".turn").nth(1).locator(".answer-body.final")).to_contain_text("Le projet dure 18 mois")

    ui.locator("#write-opt-in input").check()  # « rédiger avec le modèle »: the model is asked, stopped reading
    ask(ui, "Et quel est son budget ?")
    written = ui.locator(".turn").nth(2)
    expect(written.locator(".progress")).to_contain_text("Lecture des extraits", timeout=ANSWER_TIMEOUT)
    written.get_by_role("button", name="Arrêter").click()
    expect(ui.locator(".answer-body.final")).to_have_count(3, timeout=ANSWER_TIMEOUT)
    expect(written.locator(".badge.warn")).to_have_text("réponse interrompue")
    expect(written.locator(".badge.quoted")).to_have_count(0)
    expect(ui.locator("#write-opt-in input")).not_to_be_checked()  # a choice for that question only
    assert ui.locator("#thread-id").input_value() == thread_id

    ui.get_by_role("button", name="Enregistrer cette conversation").click()
    saved = ui.locator(".saved a")
    expect(saved).to_contain_text("obsirag/conversations/")
    assert QUESTION in (live.settings.vault / saved.inner_text()).read_text(encoding="utf-8")
    ui.goto("/conversations")
    expect(ui.locator(".thread-list")).to_contain_text(QUESTION)
    ui.locator(".thread-title").filter(has_text=QUESTION).click()
    expect(ui.locator(".turn")).to_have_count(3)  # reopened with every turn
    expect(ui.locator(".badge.quoted")).to_have_count(2)  # and what each was

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
