"""Research mode in a real browser (issue #35): its steps appear as they happen, before the answer's first token;
the trail stays under the answer and saves as a note; « Arrêter » stops it while the model writes.

The bundled model quotes: the first research answers at once, part by part. The second ticks « rédiger avec le
modèle » too: the rules still plan (the bundled model cannot), and the answer is stopped while the model reads.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import screenshot
from tests.support.system import System

pytestmark = [pytest.mark.browser, pytest.mark.timeout(1200)]
ANSWER_TIMEOUT = 600_000
QUOTE_TIMEOUT = 60_000
QUESTION = "Quel est le rôle de Claire et de Marc dans Atlas ?"
# What the thread receives, in order: a research step (li.step) or a token of the answer (a span in the stream).
WATCH = """() => {
  window.seen = [];
  new MutationObserver((records) => {
    for (const record of records) for (const node of record.addedNodes) {
      if (node.nodeType !== 1) continue;
      if (node.matches("li.step")) window.seen.push("step");
      else if (node.parentElement && node.parentElement.matches(".answer-body.streaming")) window.seen.push("token");
    }
  }).observe(document.getElementById("thread"), {childList: true, subtree: true});
}"""


def ask(page: Page, question: str) -> None:
    page.fill("#question", question)
    page.get_by_role("button", name="Envoyer").click()


def test_research_steps_come_first_the_trail_saves_and_stop_ends_it(ui: Page, live: System) -> None:
    ui.goto("/")
    ui.evaluate(WATCH)
    ui.locator("#research-opt-in input").check()
    ask(ui, QUESTION)
    expect(ui.locator(".answer-body.final")).to_be_visible(timeout=QUOTE_TIMEOUT)
    seen = ui.evaluate("window.seen")
    assert seen[:4] == ["step"] * 4 and "token" in seen  # plan, two searches, « citée… », then the answer
    trail = ui.locator(".research-trail li")
    expect(trail).to_have_count(2)
    expect(trail.first).to_contain_text("Claire Dubois")
    expect(trail.nth(1)).to_contain_text("Marc Lefèvre")
    expect(ui.locator(".answer-body.final")).to_contain_text("1. Quel est le rôle de Claire dans Atlas ?")
    expect(ui.locator("#research-opt-in input")).not_to_be_checked()  # a choice for that question only
    ui.evaluate("document.querySelector('.turn').scrollIntoView({block: 'start'}); window.scrollBy(0, -80)")
    screenshot(ui, "research", above="#composer")

    ui.get_by_role("button", name="Enregistrer la recherche dans le coffre").click()
    saved = ui.locator(".research-saved a")
    expect(saved).to_contain_text("obsirag/research/")
    assert "[[Personnes/Marc Lefèvre|" in (live.settings.vault / saved.inner_text()).read_text(encoding="utf-8")

    ui.locator("#research-opt-in input").check()
    ui.locator("#write-opt-in input").check()
    ask(ui, "Quelle différence entre la tarte tatin et la ratatouille ?")
    written = ui.locator(".turn").nth(1)
    expect(written.locator(".research-steps li").last).to_contain_text("Rédaction", timeout=QUOTE_TIMEOUT)
    expect(written.locator(".progress")).to_contain_text("Lecture des extraits", timeout=ANSWER_TIMEOUT)
    written.get_by_role("button", name="Arrêter").click()
    expect(ui.locator(".answer-body.final")).to_have_count(2, timeout=ANSWER_TIMEOUT)
    expect(written.locator(".badge.warn")).to_have_text("réponse interrompue")
    expect(written.locator(".research-trail li")).to_have_count(2)  # what was found stays, stopped or not
