"""The « Cartes » page: the due cards reviewed one at a time (the answer shown, then Encore / Difficile / Bien /
Facile by click or keys 1–4, ``u`` undoes the last grade), due counts and the next dates, a filter by note; and
the note viewer's « Faire des cartes » (issue #36)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from litestar import Controller, get, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.params import Body, FromPath, FromQuery
from litestar.response import Template
from pydantic import BaseModel

from services.cards.review import grade, source_changed, sync_deck, tagged
from services.catalog import Catalog
from services.config import Settings
from services.system.cards import make_cards_now
from web.page_route import page

UrlEncoded = Body(media_type=RequestEncodingType.URL_ENCODED)
UPCOMING = 10


class MakeForm(BaseModel):
    path: str = ""


class CardsController(Controller):
    path = "/cards"

    @page("/", sync_to_thread=True)
    def index(
        self,
        settings: NamedDependency[Settings],
        catalog: NamedDependency[Catalog],
        note: FromQuery[str] = "",
        tag: FromQuery[str] = "",
    ) -> Template:
        sync_deck(settings, catalog, _now())
        context = {"active": "cards", **_panel(catalog, note, tag), **_overview(catalog, note, tag)}
        return Template("cards.html", context=context)

    @get("/answer/{card_id:str}", sync_to_thread=True)
    def answer(
        self,
        settings: NamedDependency[Settings],
        catalog: NamedDependency[Catalog],
        card_id: FromPath[str],
        note: FromQuery[str] = "",
        tag: FromQuery[str] = "",
    ) -> Template:
        row = catalog.card(card_id)
        changed = row is not None and source_changed(settings, row)
        context = {"card": row, "shown": True, "changed": changed, "note": note, "tag": tag}
        return Template("_card.html", context=context)

    @post("/grade/{card_id:str}/{rating:int}", sync_to_thread=True, status_code=200)
    def grade(
        self,
        settings: NamedDependency[Settings],
        catalog: NamedDependency[Catalog],
        card_id: FromPath[str],
        rating: FromPath[int],
        note: FromQuery[str] = "",
        tag: FromQuery[str] = "",
    ) -> Template:
        if rating in (1, 2, 3, 4) and catalog.card(card_id) is not None:
            grade(catalog, card_id, rating, _now())
        return Template("_card.html", context=_panel(catalog, note, tag))

    @post("/undo", sync_to_thread=True, status_code=200)
    def undo(self, catalog: NamedDependency[Catalog], note: FromQuery[str] = "", tag: FromQuery[str] = "") -> Template:
        catalog.undo_last_grade()
        return Template("_card.html", context=_panel(catalog, note, tag))

    @post("/make", sync_to_thread=True, status_code=200)
    def make(
        self,
        settings: NamedDependency[Settings],
        catalog: NamedDependency[Catalog],
        data: Annotated[MakeForm, UrlEncoded],
    ) -> Template:
        try:
            made = make_cards_now(settings, catalog, data.path)
        except FileNotFoundError:
            return Template("_flash.html", context={"message": "Cette note est introuvable."}, status_code=404)
        message = f"{len(made.cards)} carte(s) ajoutée(s)" + (f" à {made.file}" if made.file else "")
        return Template("_flash.html", context={"message": message})


def _panel(catalog: Catalog, note: str, tag: str) -> dict[str, Any]:
    """The next due card (its question only), and how many are due."""
    due = tagged(catalog, catalog.cards(due_before=_now(), source=note or None), tag)
    return {"card": due[0] if due else None, "shown": False, "due_now": len(due), "note": note, "tag": tag}


def _overview(catalog: Catalog, note: str, tag: str) -> dict[str, Any]:
    rows = tagged(catalog, catalog.cards(source=note or None), tag)
    sources = sorted({row.source for row in catalog.cards()})
    tags = sorted({t for path in sources if (record := catalog.get_note(path)) for t in record.tags})
    upcoming = [row for row in rows if row.due > _now()][:UPCOMING]
    return {"total": len(rows), "upcoming": upcoming, "notes": sources, "tags": tags}


def _now() -> datetime:
    return datetime.now().astimezone()
