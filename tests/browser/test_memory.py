"""Reminders and memory in a real browser: a due reminder in the header and its list, snooze and done; a
pending fact confirmed from its card."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from playwright.sync_api import Page, expect

from services.catalog import Catalog
from services.catalog.memory_models import Fact, FactKind, FactSource
from services.memory.facts import Policy, file_fact
from services.memory.reminders import parse_reminder, save_reminder
from tests.browser.conftest import screenshot
from tests.support.system import System

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]


def test_a_due_reminder_is_counted_in_the_header_then_snoozed_and_done(ui: Page, live: System) -> None:
    asked = datetime.now().astimezone() - timedelta(days=22)  # "dans 3 semaines", three weeks and a day ago
    with Catalog(live.settings.catalog_path) as catalog:
        draft = parse_reminder("rappelle-moi dans 3 semaines de relancer Sophie", asked)
        reminder = save_reminder(catalog, draft, asked)  # type: ignore[arg-type]
    ui.goto("/reminders")
    expect(ui.locator("#reminders-due")).to_have_text("1")
    row = ui.locator(f"#reminder-{reminder.id}")
    expect(ui.locator("#due-reminders")).to_contain_text("relancer Sophie")
    screenshot(ui, "reminders")
    for _ in range(3):  # each snooze answered before the next click (htmx drops a click while one is in flight)
        with ui.expect_response(lambda response: response.url.endswith(f"/reminders/{reminder.id}/snooze")):
            row.get_by_role("button", name="Repousser d'un jour").click()
        expect(row).not_to_have_class("reminder due")  # a day later: no longer due
    expect(row.locator(".badge.warn")).to_have_text("⚠ repoussé 3 fois")
    row.get_by_role("button", name="Fait").click()
    expect(row.locator(".badge.ok")).to_have_text("fait")
    ui.goto("/reminders")
    expect(ui.locator("#reminders-due")).to_have_count(0)
    expect(ui.locator(f"#reminder-{reminder.id}")).to_have_count(0)


def test_a_pending_fact_is_confirmed_from_its_card(ui: Page, live: System) -> None:
    now = datetime.now().astimezone()
    fact = Fact(
        subject="moi",
        predicate="traitement",
        value="magnésium le soir",
        kind=FactKind.HABIT,
        confidence=0.9,
        source=FactSource.CONSOLIDATION,
        source_ref="Santé/Suivi.md",
        created_at=now,
        updated_at=now,
        last_seen=now,
    )
    with Catalog(live.settings.catalog_path) as catalog:
        file_fact(catalog, fact, Policy(0.7, ("Santé",), 180), now)
        [pending] = [f for f in catalog.facts() if f.value == "magnésium le soir"]
    ui.goto("/memory")
    card = ui.locator(f"#fact-{pending.id}")
    expect(card).to_contain_text("à valider")
    card.get_by_label(f"Corriger la valeur du fait {pending.id}").fill("magnésium 300 mg le soir")
    card.get_by_role("button", name="Confirmer").click()
    expect(card).to_contain_text("magnésium 300 mg le soir")
    expect(card).to_contain_text("confirmé")
    screenshot(ui, "memory")


def test_a_reminder_confirmation_is_one_click(ui: Page, live: System) -> None:
    """Clicked twice, the button sent a second « oui » and the model claimed a save that never happened."""
    ui.goto("/")
    ui.fill("#question", "rappelle-moi dans 3 semaines d'arroser le ficus")
    ui.get_by_role("button", name="Envoyer").click()
    button = ui.get_by_role("button", name="enregistrer le rappel")
    button.click()
    expect(button).to_be_disabled()
    answers = ui.locator(".answer-body.final")
    expect(answers.nth(1)).to_contain_text("C'est enregistré (rappel #")
    button.dispatch_event("click")  # a disabled button sends nothing
    ui.wait_for_timeout(500)
    expect(answers).to_have_count(2)
    ui.reload()  # the confirmation is answered: no button to click again
    expect(ui.get_by_role("button", name="enregistrer le rappel")).to_have_count(0)
    with Catalog(live.settings.catalog_path) as catalog:
        assert [r.text for r in catalog.reminders()].count("arroser le ficus") == 1
