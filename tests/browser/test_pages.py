"""Graph, dashboard and every page of the navigation in a real browser, without console errors."""

from __future__ import annotations

import os
import re
import signal

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import screenshot
from tests.support.system import System

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]
INDEXING_TIMEOUT = 180_000
PLACEHOLDER_FITS = """input => {
    const style = getComputedStyle(input), context = document.createElement("canvas").getContext("2d");
    context.font = `${style.fontSize} ${style.fontFamily}`;
    const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return context.measureText(input.placeholder).width <= room;
}"""
HOSTILE_MERMAID = '# Diagramme piégé\n\n```mermaid\ngraph TD\n  A["<img src=x onerror=alert(18)>"] --> B[Fin]\n```\n'


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
    boxes = ui.locator("#graph-canvas svg text").evaluate_all(
        "texts => texts.map(t => { const b = t.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; })"
    )
    assert len(boxes) >= 10  # the best-connected notes are named; the others on hover
    for hub in ui.locator(".top-notes a").evaluate_all("links => links.map(a => a.dataset.path)"):
        expect(ui.locator(f'#graph-canvas svg text[data-path="{hub}"]')).to_have_count(1)  # the hubs first
    clashes = [
        (a, b)
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
    ]
    assert not clashes, f"{len(clashes)} overlapping labels at 1280×800"
    assert ui.get_by_label("Texte").evaluate(PLACEHOLDER_FITS), "the text filter's placeholder is cut off"
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
    screenshot(ui, "dashboard")  # the README's picture: the running system, before the indexer is paused

    # The indexer paused (SIGSTOP): the reindex asked for waits in its queue, for certain, however fast the
    # rebuild would run (the embedding cache makes a same-model rebuild quick).
    indexer = live.process_state("indexer")
    assert indexer is not None
    os.kill(indexer.pid, signal.SIGSTOP)
    try:
        # Twice: the paused consumer's pending blocking pop still takes the first task off the queue.
        for _ in range(2):
            ui.once("dialog", lambda dialog: dialog.accept())
            ui.get_by_role("button", name="Réindexer le coffre").click()
            expect(ui.locator("#admin-flash")).to_contain_text("Réindexation demandée")
        queued = ui.locator('tr[data-queue="index"] .task.pending')
        # NER's tasks (« entités ajoutées à l'index ») may be listed before it.
        expect(queued.filter(has_text="reconstruction de l'index").first).to_be_visible(timeout=INDEXING_TIMEOUT)
        screenshot(ui, "dashboard-queued")
    finally:
        os.kill(indexer.pid, signal.SIGCONT)

    note = live.settings.vault / "Inbox" / "Martin-pêcheur.md"
    note.parent.mkdir()
    note.write_text("# Martin-pêcheur\n\nIl plonge dans la rivière glacée.\n", encoding="utf-8")
    ui.get_by_label("Chercher un fichier").fill("Martin-pêcheur")
    row = ui.locator('#file-status tr[data-path="Inbox/Martin-pêcheur.md"]')
    expect(row.locator(".badge")).to_have_text("indexée", timeout=INDEXING_TIMEOUT)

    # A link leading out of the vault is skipped at once, with its reason and fix, never a failed task to
    # retry; once it is replaced by a real note, that note is indexed.
    outside = live.settings.data_dir / "outside.md"
    outside.write_text("# Dehors\n", encoding="utf-8")
    broken = live.settings.vault / "Inbox" / "Cassé.md"
    broken.symlink_to(outside)
    problem = ui.locator('#note-problems li[data-path="Inbox/Cassé.md"]')
    expect(problem).to_contain_text("ignorée", timeout=INDEXING_TIMEOUT)
    expect(problem).to_contain_text("lien symbolique vers l'extérieur du coffre")
    expect(problem.locator(".fix")).to_contain_text("copie la note dans le coffre")
    expect(ui.locator("table.history tr.task-error").filter(has_text="Inbox/Cassé.md")).to_have_count(0)
    broken.unlink()
    broken.write_text("# Cassé\n\nRéparé.\n", encoding="utf-8")
    ui.get_by_label("Chercher un fichier").fill("Cassé")
    expect(ui.locator('#file-status tr[data-path="Inbox/Cassé.md"] .badge')).to_have_text(
        "indexée", timeout=INDEXING_TIMEOUT
    )
    expect(problem).to_have_count(0)
    live.wait_indexed(42)  # the reindex is over before the session ends


def test_a_hostile_mermaid_label_stays_text(ui: Page, live: System) -> None:
    note = live.settings.vault / "Piège" / "Diagramme.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text(HOSTILE_MERMAID, encoding="utf-8")
    requested: list[str] = []
    ui.on("request", lambda request: requested.append(request.url))
    ui.on("dialog", lambda dialog: requested.append(f"dialog: {dialog.message}"))
    ui.goto("/notes/Pi%C3%A8ge/Diagramme.md")
    svg = ui.locator(".mermaid-block svg")
    expect(svg).to_be_visible()
    expect(svg).to_contain_text("Fin")
    screenshot(ui, "mermaid-hostile")
    assert svg.locator("img").count() == 0 and svg.locator("foreignObject").count() == 0
    handlers = svg.evaluate("s => [...s.querySelectorAll('*')].flatMap(e => [...e.attributes]).map(a => a.name)")
    assert not [name for name in handlers if name.lower().startswith("on")]
    assert not [url for url in requested if url.rstrip("/").endswith("/x") or url.startswith("dialog")]
