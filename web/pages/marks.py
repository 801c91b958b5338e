"""What the user's clicks teach the search (issue #32): a cited note opened, « c'était ça », « pas ça ».

The question is read from the stored turn, never taken from the browser; the marks stay in this vault's
catalog (listed and erasable on ``/memory``) and are never written in the vault nor sent anywhere.
"""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.exceptions import NotFoundException
from litestar.params import Body, FromPath
from litestar.response import Response, Template
from pydantic import BaseModel

from services.catalog import Catalog
from services.catalog.models import Verdict
from web.dependencies import Clock

Form = Body(media_type=RequestEncodingType.URL_ENCODED)
SAID = {Verdict.YES: "Noté : c'était ça.", Verdict.NO: "Noté : pas ça."}


class MarkForm(BaseModel):
    turn: int
    path: str
    verdict: Verdict


class MarksController(Controller):
    path = "/sources"

    @post("/mark", sync_to_thread=True, status_code=200)
    def mark(
        self, catalog: NamedDependency[Catalog], clock: NamedDependency[Clock], data: Annotated[MarkForm, Form]
    ) -> Response[str]:
        if catalog.mark_turn_source(data.turn, data.path, data.verdict, clock()) is None:
            raise NotFoundException("no such turn or source")
        return Response(SAID.get(data.verdict, ""), media_type="text/html")


class LearnedController(Controller):
    path = "/memory/marks"

    @post("/{mark_id:int}/forget", sync_to_thread=True, status_code=200)
    def forget(self, catalog: NamedDependency[Catalog], mark_id: FromPath[int]) -> Response[str]:
        if not catalog.forget_mark(mark_id):
            raise NotFoundException()
        return Response("", media_type="text/html")

    @post("/forget", sync_to_thread=True, status_code=200)
    def forget_all(self, catalog: NamedDependency[Catalog]) -> Template:
        catalog.forget_marks()
        return Template("_marks.html", context={"marks": []})
