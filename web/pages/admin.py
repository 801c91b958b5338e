"""The admin dashboard: processes, queues, task history (with retry), index coverage, learner, mlx worker."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery
from litestar.response import Template

from services.catalog import Catalog, NotesTable
from services.config import Settings
from services.learner.progress import learner_progress
from services.memory.status import memory_status
from services.system import SystemClient, SystemNotRunning
from web.dependencies import Clock
from web.page_route import page

FILE_RESULTS = 50
RECENT = 10  # last questions shown with the chat's outcome and why
QUEUE_PREVIEW = 4  # tasks shown per queue (the depth says how many more)
PROBLEMS_SHOWN = 50  # notes skipped, failed or indexed with a warning (the totals say how many in all)


class AdminController(Controller):
    path = "/admin"

    @page("/", sync_to_thread=True)
    def index(
        self,
        settings: NamedDependency[Settings],
        catalog: NamedDependency[Catalog],
        client: NamedDependency[SystemClient],
        clock: NamedDependency[Clock],
    ) -> Template:
        live = live_state(settings, catalog, client, clock())
        context = {"active": "admin", **live, **_files(catalog.notes, ""), "questions": catalog.recent_turns(RECENT)}
        return Template("admin.html", context=context)

    @page("/live", sync_to_thread=True)
    def live(
        self,
        settings: NamedDependency[Settings],
        catalog: NamedDependency[Catalog],
        client: NamedDependency[SystemClient],
        clock: NamedDependency[Clock],
    ) -> Template:
        return Template("_admin_live.html", context=live_state(settings, catalog, client, clock()))

    @page("/files", sync_to_thread=True)
    def files(self, notes: NamedDependency[NotesTable], q: FromQuery[str] = "") -> Template:
        return Template("_file_status.html", context=_files(notes, q))

    @post("/reindex", sync_to_thread=True)
    def reindex(self, client: NamedDependency[SystemClient]) -> Template:
        try:
            client.reindex()
            message = (
                "Réindexation demandée : l'indexeur reconstruit l'index à côté de l'actuel, qui répond en attendant."
            )
        except SystemNotRunning:
            message = client.unavailable("fr") or "ObsiRAG ne tourne pas : lance `obsirag up`."
        return Template("_flash.html", context={"message": message})

    @post("/tasks/{task_id:str}/retry", sync_to_thread=True)
    def retry_task(self, client: NamedDependency[SystemClient], task_id: FromPath[str]) -> Template:
        try:
            record = client.retry(task_id)
        except KeyError:
            raise NotFoundException("no failed task with this id (or already retried)") from None
        message = f"Tâche {record.name} relancée ({record.summary})."
        return Template("_flash.html", context={"message": message})


def live_state(settings: Settings, catalog: Catalog, client: SystemClient, now: datetime) -> dict[str, Any]:
    """Everything the auto-refreshing part of the dashboard shows: the system's status (the one that
    ``obsirag status`` prints), the catalog's coverage and runs, the task history."""
    status = client.status(lang="fr", problems=PROBLEMS_SHOWN, preview=QUEUE_PREVIEW)
    learner = status.process("learner")
    progress = learner_progress(settings, catalog, learner.details) if learner is not None else None
    return {
        "now": time.time(),
        "counts": status.notes,
        "coverage": catalog.notes.folder_coverage(depth=1),
        "problems": status.problems,
        "runs": catalog.runs.last_runs(5),
        "running": status.running,
        "redis_message": status.redis_message("fr"),  # Redis restarting: said instead of "not running"
        "processes": status.processes,
        "queues": status.queue_tasks,
        "history": client.recent_tasks(25),
        "mlx": status.generation,
        "learner": progress.model_dump() if progress is not None else None,
        "rebuild": status.rebuild,
        "sync": status.sync,
        "extractions": status.extractions,
        "extraction_backlog": status.extraction_backlog,
        "memory": memory_status(settings, catalog, now),
        "settings": settings,  # what the model's writing check turns on (``filters.features_label``)
        "cards_due": len(catalog.cards(due_before=_end_of_day(now))),
        "sources": status.connectors,
    }


def _end_of_day(now: datetime) -> datetime:
    local = now.astimezone()
    return local.replace(hour=23, minute=59, second=59, microsecond=0)


def _files(notes: NotesTable, query: str) -> dict[str, Any]:
    found = notes.list_notes(query=query.strip() or None, limit=FILE_RESULTS) if query.strip() else []
    return {"q": query, "files": found}
