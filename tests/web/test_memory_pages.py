"""/memory and /reminders on the real app, with its clock set by the test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from litestar.testing import TestClient

from services.catalog.graph import GraphFilter, KnowledgeGraph
from services.catalog.memory_models import Fact, FactKind, FactSource, FactStatus
from services.config import Settings
from services.llm.capability import writer_wait
from services.memory.cycle import record_wait
from services.memory.facts import Policy, file_fact
from services.memory.reminders import parse_reminder, save_reminder
from tests.support.web_app import html
from web.app import CSRF_COOKIE, create_app
from web.dependencies import WebServices

CREATED = datetime(2026, 12, 1, 10, 0).astimezone()
DUE = CREATED + timedelta(days=21)  # "dans 3 semaines"


@pytest.fixture(scope="module")
def memory_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[WebServices, TestClient]]:
    root = tmp_path_factory.mktemp("memory-web")
    (root / "vault").mkdir()
    settings = Settings(vault=root / "vault", data_dir=root / "data", redis_url=f"unix://{root}/no-redis.sock")
    site = WebServices.build(settings)
    site.clock = lambda: CREATED
    with TestClient(create_app(settings, site)) as client:
        yield site, client


@pytest.fixture
def csrf(memory_site: tuple[WebServices, TestClient]) -> dict[str, str]:
    _site, client = memory_site
    client.get("/memory")
    return {"x-csrftoken": client.cookies[CSRF_COOKIE]}


def _fact(value: str, source_ref: str, **fields: object) -> Fact:
    data = {
        "subject": "moi",
        "predicate": "traitement",
        "value": value,
        "kind": FactKind.HABIT,
        "confidence": 0.9,
        "source": FactSource.CONSOLIDATION,
        "source_ref": source_ref,
        "created_at": CREATED,
        "updated_at": CREATED,
        "last_seen": CREATED,
        **fields,
    }
    return Fact.model_validate(data)


def test_pending_facts_are_cards_to_confirm_edit_or_forget(
    memory_site: tuple[WebServices, TestClient], csrf: dict[str, str]
) -> None:
    site, client = memory_site
    policy = Policy(0.7, ("Santé",), 180)
    file_fact(site.catalog, _fact("magnésium le soir", "Santé/Suivi.md"), policy, CREATED)
    file_fact(
        site.catalog,
        _fact("Postgres", "Projets/Atlas.md", subject="Atlas", predicate="base", kind=FactKind.DECISION),
        policy,
        CREATED,
    )
    page = html(client, "/memory")
    assert 'À valider <span class="badge warn">1</span>' in page
    assert "magnésium le soir" in page and 'href="/notes/Sant%C3%A9/Suivi.md"' in page and "Confirmer" in page
    pending = site.catalog.facts([FactStatus.PENDING])[0]
    confirmed = client.post(f"/memory/{pending.id}/confirm", data={"value": "magnésium 300 mg le soir"}, headers=csrf)
    assert (
        confirmed.status_code == 200 and "magnésium 300 mg le soir" in confirmed.text and "confirmé" in confirmed.text
    )
    fact = site.catalog.get_fact(pending.id or 0)
    assert fact is not None and (fact.status, fact.source) == (FactStatus.CONFIRMED, FactSource.USER)
    forgotten = client.post(f"/memory/{pending.id}/forget", headers=csrf)
    assert "oublié" in forgotten.text and "Oublier" not in forgotten.text
    assert "Historique" in html(client, "/memory")
    assert client.post("/memory/999/forget", headers=csrf).status_code == 404


def test_a_reminder_shows_as_due_once_the_clock_reaches_it_then_snooze_and_done(
    memory_site: tuple[WebServices, TestClient], csrf: dict[str, str]
) -> None:
    site, client = memory_site
    draft = parse_reminder("rappelle-moi dans 3 semaines de relancer Sophie", CREATED)
    reminder = save_reminder(site.catalog, draft, CREATED)  # type: ignore[arg-type]
    assert "relancer Sophie" in _lists(html(client, "/reminders"))
    assert html(client, "/reminders/badge").strip() == ""
    site.clock = lambda: reminder.due_at + timedelta(minutes=5)
    try:
        page = html(client, "/reminders")
        due_list = page.split('id="due-reminders"')[1].split("</ul>")[0]
        assert "relancer Sophie" in due_list
        assert 'id="reminders-due"' in html(client, "/reminders/badge") and ">1<" in html(client, "/reminders/badge")
        for _ in range(3):
            row = client.post(f"/reminders/{reminder.id}/snooze", headers=csrf).text
        assert "⚠ repoussé 3 fois" in row
        done = client.post(f"/reminders/{reminder.id}/done", headers=csrf).text
        assert "fait" in done and "Repousser" not in done
        assert "relancer Sophie" not in _lists(html(client, "/reminders"))
    finally:
        site.clock = lambda: CREATED


def test_the_navigation_has_memory_and_reminders(memory_site: tuple[WebServices, TestClient], tmp_path: Path) -> None:
    _site, client = memory_site
    page = html(client, "/memory")
    assert 'href="/memory"' in page and 'href="/reminders"' in page and 'hx-get="/reminders/badge"' in page


def _lists(page: str) -> str:
    return page.split('id="due-reminders"')[1].split("</section>")[0]


def test_a_reminder_confirmation_and_the_memory_used_show_under_their_answers(
    memory_site: tuple[WebServices, TestClient],
) -> None:
    from services.catalog.models import MemoryUse, Provenance, Turn

    site, client = memory_site
    thread = site.catalog.create_thread("Rappel")
    asked = "Je te le rappellerai le mardi 22 décembre 2026 à 09:00 : relancer Sophie. Je l'enregistre ?"
    site.catalog.add_turn(
        Turn(thread_id=thread, question="rappelle-moi …", answer=asked, provenance=Provenance.NONE, created_at=CREATED)
    )
    [pending] = html(client, f"/?thread={thread}").split('<article class="turn">')[1:]
    assert 'name="question" value="oui"' in pending and "enregistrer le rappel" in pending
    used = [MemoryUse(id=7, text="Atlas — base : Postgres")]
    site.catalog.add_turn(
        Turn(
            thread_id=thread,
            question="Quelle base ?",
            answer="Postgres [1].",
            memory=used,
            provenance=Provenance.VAULT,
            created_at=CREATED,
        )
    )
    page = html(client, f"/?thread={thread}")
    confirm, answered = page.split('<article class="turn">')[1:3]
    # A later message answered the confirmation: its button would send a « oui » with nothing left to save.
    assert "rappelle-moi" in confirm and "enregistrer le rappel" not in confirm
    assert "mémoire utilisée (1)" in answered and "Atlas — base : Postgres" in answered
    assert 'href="/memory#fact-7"' in answered and "enregistrer le rappel" not in answered


def test_the_dashboard_says_where_memory_stands(memory_site: tuple[WebServices, TestClient]) -> None:
    site, client = memory_site
    run = site.catalog.start_run("memory", CREATED)
    site.catalog.add_run_stats(run, facts_added=2, facts_rejected=1, prompt_tokens=1500, completion_tokens=200)
    site.catalog.finish_run(run, None, CREATED)
    page = html(client, "/admin")
    panel = page.split('id="memory-panel"')[1].split("</section>")[0]
    assert "2 faits ajoutés, 1 rejetés" in panel and "1700 / 20000 tokens" in panel
    assert "Prochain briefing" in panel and "Rappels échus" in panel


def test_briefings_are_artifacts_of_their_own_type(memory_site: tuple[WebServices, TestClient]) -> None:
    from services import vault
    from services.catalog.models import NoteRecord, NoteStatus
    from services.memory.briefing import write_briefing
    from services.vault.models import NoteType

    site, client = memory_site
    (site.settings.vault / "Projets").mkdir(exist_ok=True)
    atlas = site.settings.vault / "Projets" / "Atlas.md"
    atlas.write_text("# Atlas\n\n- [ ] relancer la mairie\n", encoding="utf-8")
    month_ago = (CREATED - timedelta(days=30)).timestamp()
    os.utime(atlas, (month_ago, month_ago))  # an open task old enough for the briefing to cite its note
    briefing = write_briefing(site.settings, site.catalog, None, CREATED)
    assert briefing is not None
    for path in ("Projets/Atlas.md", briefing.path):  # what the indexer records of both notes
        note = vault.read_note(site.settings.vault, path, site.settings.max_file_bytes)
        fields = note.model_dump(include=set(NoteRecord.model_fields) & set(type(note).model_fields))
        site.catalog.upsert_note(NoteRecord(**fields, status=NoteStatus.INDEXED, chunk_count=1))
        site.catalog.replace_links(path, note.links)
    site.catalog.resolve_links()
    assert vault.read_note(site.settings.vault, briefing.path, 10**6).note_type == NoteType.BRIEFING
    page = html(client, "/artifacts?kind=briefing")
    assert f"Briefing du {CREATED.date().isoformat()}" in page and "Briefings" in page
    # Its preview is rendered as the note viewer does: a link to the cited note, no raw Markdown.
    card = page.split('class="card artifact"')[1].split("</article>")[0]
    preview = card.split("</header>")[1].split("<footer>")[0]
    assert "[[" not in preview and "_Aucun" not in preview and "**" not in preview
    assert 'href="/notes/Projets/Atlas.md' in preview and "<em>" in preview
    # The graph: the briefing is a node linked to the note it cites, on the graph page too.
    view = KnowledgeGraph.from_catalog(site.catalog).view(GraphFilter(own=True))
    node = next(n for n in view.nodes if n.id == briefing.path)
    assert node.type == "briefing" and node.degree == 1
    [edge] = [e for e in view.edges if briefing.path in (e.source, e.target)]
    assert {edge.source, edge.target} == {briefing.path, "Projets/Atlas.md"} and edge.kind == "link"
    assert briefing.path in html(client, "/graph?own=true")  # ObsiRAG's own files: behind the page's toggle
    assert briefing.path not in html(client, "/graph")


def test_a_managed_file_whose_markers_were_removed_is_reported_on_every_memory_page(
    memory_site: tuple[WebServices, TestClient],
) -> None:
    site, client = memory_site
    mirror = site.settings.vault / "obsirag" / "assistant" / "Rappels.md"
    mirror.parent.mkdir(parents=True, exist_ok=True)
    mirror.write_text("# Rappels\n\n- [ ] relancer Sophie (rappel #1)\n", encoding="utf-8")  # markers removed
    try:
        for url in ("/memory", "/reminders", "/admin"):
            page = html(client, url)
            assert "obsirag/assistant/Rappels.md : la section « rappels » n&#39;a plus ses marqueurs" in page, url
    finally:
        mirror.unlink()
    assert "marker-problems" not in html(client, "/reminders")


def test_a_consolidation_in_progress_or_waiting_for_a_model_is_said_so(
    memory_site: tuple[WebServices, TestClient],
) -> None:
    """#26: /memory showed a « dernière consolidation » line while the first one was still running, and the
    bundled model's timeout as an error."""
    site, client = memory_site
    run = site.catalog.start_run("memory", CREATED)
    page = html(client, "/memory")
    assert 'id="consolidation-running"' in page and "Consolidation en cours depuis" in page
    assert "3 ajoutés" not in page
    assert 'id="memory-running"' in html(client, "/admin")
    site.catalog.add_run_stats(run, facts_added=3)
    site.catalog.finish_run(run, None, CREATED)
    page = html(client, "/memory")
    assert "consolidation-running" not in page and "3 ajoutés" in page.split('id="last-consolidation"')[1]

    wait = writer_wait(Settings(), None)  # the bundled model's stated capability
    assert wait is not None
    record_wait(site.catalog, wait, CREATED)
    try:
        page = html(client, "/memory")
        waiting = page.split('id="consolidation-waiting"')[1].split("</p>")[0]
        assert "en attente d&#39;un modèle capable de rédiger : le modèle intégré (SmolLM2-135M)" in waiting
        assert "OBSIRAG_LLM_MODEL" in waiting and "OBSIRAG_LLM_CAN_WRITE=yes" in waiting
        panel = html(client, "/admin").split('id="memory-panel"')[1].split("</section>")[0]
        assert 'id="memory-waiting"' in panel and "dès qu&#39;un modèle capable de rédiger tourne" in panel
    finally:
        record_wait(site.catalog, None, CREATED)
    assert "consolidation-waiting" not in html(client, "/memory")
