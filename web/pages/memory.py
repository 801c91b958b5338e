"""Memory: what ObsiRAG remembers, with each fact's source; pending ones as cards to confirm, edit or forget."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.exceptions import NotFoundException
from litestar.params import Body, FromPath
from litestar.response import Template
from pydantic import BaseModel

from services.catalog import Catalog, MemoryTable
from services.catalog.memory_models import ACTIVE, Fact, FactStatus
from services.config import Settings
from services.memory.facts import confirm_fact, forget_fact
from services.memory.profile import PROFILE
from services.memory.status import memory_status
from web.dependencies import Clock
from web.page_route import page

Form = Body(media_type=RequestEncodingType.URL_ENCODED)
HISTORY = 50


class ValueForm(BaseModel):
    value: str = ""


class MemoryController(Controller):
    path = "/memory"

    @page("/", sync_to_thread=True)
    def index(
        self,
        catalog: NamedDependency[Catalog],
        settings: NamedDependency[Settings],
        clock: NamedDependency[Clock],
    ) -> Template:
        facts = catalog.facts()
        status = memory_status(settings, catalog, clock())
        context = {
            "active": "memory",
            "pending": [f for f in facts if f.status == FactStatus.PENDING],
            "confirmed": sorted(
                (f for f in facts if f.status == FactStatus.CONFIRMED), key=lambda f: (f.kind, f.subject.casefold())
            ),
            "history": [f for f in facts if f.status not in ACTIVE][:HISTORY],
            "profile": f"obsirag/{PROFILE}",
            "last_run": status.last_consolidation,  # finished: one in progress is said as such
            "running": status.running,
            "waiting": status.waiting,
            "waiting_since": status.waiting_since,
            "marker_problems": status.marker_problems,
            "marks": catalog.list_marks(),  # what the user's clicks taught the search
        }
        return Template("memory.html", context=context)

    @post("/{fact_id:int}/confirm", sync_to_thread=True)
    def confirm(
        self,
        memory: NamedDependency[MemoryTable],
        clock: NamedDependency[Clock],
        fact_id: FromPath[int],
        data: Annotated[ValueForm, Form],
    ) -> Template:
        _known(memory, fact_id)
        fact = confirm_fact(memory, fact_id, clock(), data.value or None)
        return Template("_fact.html", context={"fact": fact})

    @post("/{fact_id:int}/forget", sync_to_thread=True)
    def forget(
        self, memory: NamedDependency[MemoryTable], clock: NamedDependency[Clock], fact_id: FromPath[int]
    ) -> Template:
        _known(memory, fact_id)
        forget_fact(memory, fact_id, clock())
        return Template("_fact.html", context={"fact": memory.get_fact(fact_id)})


def _known(memory: MemoryTable, fact_id: int) -> Fact:
    fact = memory.get_fact(fact_id)
    if fact is None:
        raise NotFoundException()
    return fact
