"""The admin dashboard: processes, queues, task history (with retry), index coverage, learner, mlx worker."""

from __future__ import annotations

import contextlib
import math
import time
from collections import Counter
from datetime import datetime
from typing import Any

import redis
from litestar import Controller, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery
from litestar.response import Template

from services.learner.schedule import learner_off_reason
from services.llm.client import worker_state
from services.models import NoteStatus
from services.problems import note_problems
from services.processes import read_process, read_processes
from services.rebuild import read_progress
from services.tasks import queue_state, retry
from web.handlers import page
from web.site import Site, SiteDep
from workers.supervisor import WORKERS

RETRYABLE = ("sync_batch", "sync_note", "rebuild_index")
FILE_RESULTS = 50
QUEUE_PREVIEW = 4  # tasks shown per queue (the depth says how many more)
PROBLEMS_SHOWN = 50  # notes skipped, failed or indexed with a warning (the totals say how many in all)


class AdminController(Controller):
    path = "/admin"

    @page("/", sync_to_thread=True)
    def index(self, site: SiteDep) -> Template:
        return Template("admin.html", context={"active": "admin", **live_state(site), **_files(site, "")})

    @page("/live", sync_to_thread=True)
    def live(self, site: SiteDep) -> Template:
        return Template("_admin_live.html", context=live_state(site))

    @page("/files", sync_to_thread=True)
    def files(self, site: SiteDep, q: FromQuery[str] = "") -> Template:
        return Template("_file_status.html", context=_files(site, q))

    @post("/reindex", sync_to_thread=True)
    def reindex(self, site: SiteDep) -> Template:
        try:
            site.client.reindex()
            message = (
                "Réindexation demandée : l'indexeur reconstruit l'index à côté de l'actuel, qui répond en attendant."
            )
        except (redis.ConnectionError, FileNotFoundError):
            message = "ObsiRAG ne tourne pas : lancez `obsirag up`."
        return Template("_flash.html", context={"message": message})

    @post("/tasks/{task_id:str}/retry", sync_to_thread=True)
    def retry_task(self, site: SiteDep, task_id: FromPath[str]) -> Template:
        queues = site.client.queues
        try:
            record = retry(site.history, task_id, {name: getattr(queues, name) for name in RETRYABLE})
        except KeyError:
            raise NotFoundException("no failed task with this id (or already retried)") from None
        message = f"Tâche {record.name} relancée ({record.summary})."
        return Template("_flash.html", context={"message": message})


def live_state(site: Site) -> dict[str, Any]:
    """Everything the auto-refreshing part of the dashboard shows."""
    catalog = site.catalog
    state: dict[str, Any] = {
        "now": time.time(),
        "counts": {status.value: count for status, count in catalog.status_counts().items()},
        "coverage": catalog.folder_coverage(depth=1),
        "problems": note_problems(catalog.troubled_notes(limit=PROBLEMS_SHOWN)),
        "runs": catalog.last_runs(5),
        "running": False,
        "processes": [],
        "queues": [],
        "history": [],
        "mlx": None,
        "learner": None,
        "rebuild": None if site.settings.qdrant_url else read_progress(site.settings.store_path),
    }
    with contextlib.suppress(redis.ConnectionError, redis.TimeoutError, FileNotFoundError):
        state.update(_redis_state(site))  # else the system is down: the page says so
    return state


def _redis_state(site: Site) -> dict[str, Any]:
    client = site.client.redis
    processes = read_processes(client, ["supervisor", *WORKERS])
    learner = read_process(client, "learner")
    return {
        "running": any(p.alive for p in processes),
        "processes": processes,
        "queues": [queue_state(name, huey, limit=QUEUE_PREVIEW) for name, huey in site.client.queues.hueys.items()],
        "history": site.history.recent(25),
        "mlx": worker_state(client),
        "learner": learner_progress(site, learner.details) if learner is not None else None,
    }


def learner_progress(site: Site, details: dict[str, Any]) -> dict[str, Any]:
    """Notes the learner processed, those it never looked at, an ETA at its pace, its next cycle."""
    settings, catalog = site.settings, site.catalog
    indexed = [path for path, state in catalog.note_states().items() if state[3] == NoteStatus.INDEXED]
    remaining = len(catalog.never_learned(indexed))
    outcomes = Counter(note.outcome.value for note in catalog.learned_notes())
    cycles = math.ceil(remaining / max(1, settings.learn_fullscan_per_run))
    next_run = _moment(details.get("next_run"))
    return {
        "enabled": bool(details.get("enabled")),
        "off_reason": learner_off_reason(settings),
        "web_search": settings.learn_web_search,
        "processed": sum(outcomes.values()),
        "outcomes": dict(outcomes),
        "remaining": remaining,
        "eta_seconds": cycles * settings.learn_interval_minutes * 60 if remaining else 0,
        "next_run": next_run,
        "last_run": _moment(details.get("last_run")),
    }


def _moment(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


def _files(site: Site, query: str) -> dict[str, Any]:
    notes = site.catalog.list_notes(query=query.strip() or None, limit=FILE_RESULTS) if query.strip() else []
    return {"q": query, "files": notes}
