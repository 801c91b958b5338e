"""Memory: what ObsiRAG remembers, with each fact's source; pending ones as cards to confirm, edit or forget."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from litestar import Controller, post
from litestar.enums import RequestEncodingType
from litestar.exceptions import NotFoundException
from litestar.params import Body, FromPath
from litestar.response import Template
from pydantic import BaseModel

from services.catalog.memory_models import ACTIVE, Fact, FactStatus
from services.memory.facts import confirm_fact, forget_fact
from services.memory.profile import PROFILE
from services.memory.status import marker_problems
from web.handlers import page
from web.site import Site, SiteDep

Form = Body(media_type=RequestEncodingType.URL_ENCODED)
HISTORY = 50


class ValueForm(BaseModel):
    value: str = ""


class MemoryController(Controller):
    path = "/memory"

    @page("/", sync_to_thread=True)
    def index(self, site: SiteDep) -> Template:
        facts = site.catalog.facts()
        context = {
            "active": "memory",
            "pending": [f for f in facts if f.status == FactStatus.PENDING],
            "confirmed": sorted(
                (f for f in facts if f.status == FactStatus.CONFIRMED), key=lambda f: (f.kind, f.subject.casefold())
            ),
            "history": [f for f in facts if f.status not in ACTIVE][:HISTORY],
            "profile": f"obsirag/{PROFILE}",
            "last_run": next((r for r in site.catalog.last_runs(20) if r.kind == "memory"), None),
            "marker_problems": marker_problems(site.settings.vault),
        }
        return Template("memory.html", context=context)

    @post("/{fact_id:int}/confirm", sync_to_thread=True)
    def confirm(self, site: SiteDep, fact_id: FromPath[int], data: Annotated[ValueForm, Form]) -> Template:
        _known(site, fact_id)
        fact = confirm_fact(site.catalog, fact_id, _now(), data.value or None)
        return Template("_fact.html", context={"fact": fact})

    @post("/{fact_id:int}/forget", sync_to_thread=True)
    def forget(self, site: SiteDep, fact_id: FromPath[int]) -> Template:
        _known(site, fact_id)
        forget_fact(site.catalog, fact_id, _now())
        return Template("_fact.html", context={"fact": site.catalog.get_fact(fact_id)})


def _known(site: Site, fact_id: int) -> Fact:
    fact = site.catalog.get_fact(fact_id)
    if fact is None:
        raise NotFoundException()
    return fact


def _now() -> datetime:
    return datetime.now().astimezone()
