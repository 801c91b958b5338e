"""Graph, dashboard and every page of the navigation in a real browser, without console errors."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import screenshot
from tests.e2e.conftest import System

pytestmark = pytest.mark.timeout(900)
INDEXING_TIMEOUT = 180_000


def test_every_page_loads_without_console_errors(ui: Page, live: System) -> None:
    for path, heading in [
        ("/", "Interroger mon coffre"),
        ("/conversations", "Conversations"),
        ("/notes", "Notes"),
        ("/notes/Tech/Obsidian%20-%20mon%20organisation.md", "Obsidian - mon organisation"),
        ("/graph", "Graphe des notes"),
        ("/artifacts", "Artefacts"),
        ("/admin", "Tableau de bord"),
    ]:
        ui.goto(path)
        expect(ui.locator("h1").first).to_have_text(heading)
    ui.goto("/notes")
    ui.get_by_label("Filtrer les notes").fill("levain")
    expect(ui.locator("#note-list li")).to_have_count(1)
    ui.get_by_role("link", name="Pain au levain").click()
    expect(ui.locator(".note-head h1")).to_have_text("Pain au levain")


def test_graph_filtered_by_folder_opens_a_node(ui: Page, live: System) -> None:
    ui.goto("/graph")
    expect(ui.locator("#graph-canvas svg a.node")).to_have_count(int(ui.locator("#metric-nodes").inner_text()))
    screenshot(ui, "graph")
    ui.get_by_label("Dossier").select_option("Cuisine")
    expect(ui.locator("#metric-matched")).to_have_text("5")
    nodes = ui.locator("#graph-canvas svg a.node")
    expect(nodes).to_have_count(5)
    assert "folder=Cuisine" in ui.url
    ui.locator('#graph-canvas a.node[data-path="Cuisine/Ratatouille.md"] circle').click()
    expect(ui).to_have_url(re.compile(r"/notes/Cuisine/Ratatouille\.md"))
    expect(ui.locator(".note-head h1")).to_have_text("Ratatouille")


def test_dashboard_shows_queued_work_new_notes_and_bad_notes_with_their_fix(ui: Page, live: System) -> None:
    ui.goto("/admin")
    for name in ("supervisor", "indexer", "watcher", "mlx_worker", "web"):
        expect(ui.locator(f'tr[data-process="{name}"] .badge')).to_have_text("vivant")

    # Enough notes that the reindex's batches stay queued for a while even on an idle machine.
    filler = live.settings.vault / "Remplissage"
    filler.mkdir()
    for i in range(64):
        text = f"# Note {i}\n\nUne note de remplissage numéro {i}.\n"
        (filler / f"note-{i:02d}.md").write_text(text, encoding="utf-8")
    ui.once("dialog", lambda dialog: dialog.accept())
    ui.get_by_role("button", name="Réindexer le coffre").click()
    expect(ui.locator("#admin-flash")).to_contain_text("Réindexation demandée")
    queued = ui.locator('tr[data-queue="index"] .task.pending')
    # The reindex's batches wait (NER's apply_entities tasks may be listed before them).
    expect(queued.filter(has_text="sync_batch").first).to_be_visible(timeout=INDEXING_TIMEOUT)
    screenshot(ui, "dashboard")

    note = live.settings.vault / "Inbox" / "Martin-pêcheur.md"
    note.parent.mkdir()
    note.write_text("# Martin-pêcheur\n\nIl plonge dans la rivière glacée.\n", encoding="utf-8")
    ui.get_by_label("Chercher un fichier").fill("Martin-pêcheur")
    row = ui.locator('#file-status tr[data-path="Inbox/Martin-pêcheur.md"]')
    expect(row.locator(".badge")).to_have_text("indexed", timeout=INDEXING_TIMEOUT)

    # A link leading out of the vault is skipped at once, with its reason and fix, never a failed task to
    # retry; once it is replaced by a real note, that note is indexed.
    outside = live.settings.data_dir / "outside.md"
    outside.write_text("# Dehors\n", encoding="utf-8")
    broken = live.settings.vault / "Inbox" / "Cassé.md"
    broken.symlink_to(outside)
    problem = ui.locator('#note-problems li[data-path="Inbox/Cassé.md"]')
    expect(problem).to_contain_text("ignorée", timeout=INDEXING_TIMEOUT)
    expect(problem).to_contain_text("symlink pointing outside the vault")
    expect(problem.locator(".fix")).to_contain_text("copiez la note dans le coffre")
    expect(ui.locator("table.history tr.task-error").filter(has_text="Inbox/Cassé.md")).to_have_count(0)
    broken.unlink()
    broken.write_text("# Cassé\n\nRéparé.\n", encoding="utf-8")
    ui.get_by_label("Chercher un fichier").fill("Cassé")
    expect(ui.locator('#file-status tr[data-path="Inbox/Cassé.md"] .badge')).to_have_text(
        "indexed", timeout=INDEXING_TIMEOUT
    )
    expect(problem).to_have_count(0)
    live.wait_indexed(42)  # the reindex is over before the session ends
