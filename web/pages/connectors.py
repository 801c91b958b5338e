"""« Sources connectées » (``/connectors``): mailboxes and calendars read beside the vault — add (tested at
once), test, sync now, pause or resume, remove with everything read from them (issue #37)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.exceptions import NotFoundException
from litestar.params import Body, FromPath
from litestar.response import Template
from pydantic import BaseModel, ValidationError

from services.config import Settings
from services.connectors.models import ConnectorConfig, slug_id
from services.connectors.views import connector_views
from services.system.connectors import add_connector, remove_connector, set_paused, sync_now, test_saved
from web.page_route import page

UrlEncoded = Body(media_type=RequestEncodingType.URL_ENCODED)


class SourceForm(BaseModel):
    """The page's « Ajouter une source » form (its password is kept apart, never shown again)."""

    id: str = ""
    kind: Literal["imap", "caldav", "ics"] = "imap"
    label: str = ""
    url: str = ""
    host: str = ""
    port: int = 993
    security: Literal["ssl", "starttls", "none"] = "ssl"
    username: str = ""
    folders: str = "INBOX"
    password: str = ""


class ConnectorsController(Controller):
    path = "/connectors"

    @page("/", sync_to_thread=True)
    def index(self, settings: NamedDependency[Settings]) -> Template:
        return Template("connectors.html", context={"active": "connectors", **_listing(settings)})

    @post("/add", sync_to_thread=True, status_code=200)
    def add(self, settings: NamedDependency[Settings], data: Annotated[SourceForm, UrlEncoded]) -> Template:
        fields = data.model_dump(exclude={"password", "folders"})
        fields["folders"] = [f.strip() for f in data.folders.split(",")]
        fields["id"] = data.id.strip().lower() or _default_id(data)
        try:
            config = ConnectorConfig(**fields)
        except ValidationError as exc:
            message = "Source refusée : " + "; ".join(str(e["loc"][0]) + " " + e["msg"] for e in exc.errors())
            return _listing_page(settings, message, status_code=422)
        answered, line = add_connector(settings, config, data.password)
        if answered:
            status = sync_now(settings, config.id)
            line += f" {status.items} élément(s) lus." if status.state == "ok" else f" {status.error} {status.fix}"
        return _listing_page(settings, f"{config.id} : {line}")

    @post("/{connector_id:str}/test", sync_to_thread=True, status_code=200)
    def test(self, settings: NamedDependency[Settings], connector_id: FromPath[str]) -> Template:
        _answered, line = _known(lambda: test_saved(settings, connector_id))
        return _listing_page(settings, f"{connector_id} : {line}")

    @post("/{connector_id:str}/sync", sync_to_thread=True, status_code=200)
    def sync(self, settings: NamedDependency[Settings], connector_id: FromPath[str]) -> Template:
        status = _known(lambda: sync_now(settings, connector_id))
        said = f"{status.items} élément(s)" if status.state != "error" else f"{status.error} {status.fix}"
        return _listing_page(settings, f"{connector_id} : synchronisée — {said}")

    @post("/{connector_id:str}/pause", sync_to_thread=True, status_code=200)
    def pause(self, settings: NamedDependency[Settings], connector_id: FromPath[str]) -> Template:
        _known(lambda: set_paused(settings, connector_id, True))
        return _listing_page(settings, f"{connector_id} : en pause.")

    @post("/{connector_id:str}/resume", sync_to_thread=True, status_code=200)
    def resume(self, settings: NamedDependency[Settings], connector_id: FromPath[str]) -> Template:
        _known(lambda: set_paused(settings, connector_id, False))
        return _listing_page(settings, f"{connector_id} : reprise.")

    @post("/{connector_id:str}/remove", sync_to_thread=True, status_code=200)
    def remove(self, settings: NamedDependency[Settings], connector_id: FromPath[str]) -> Template:
        count = remove_connector(settings, connector_id)
        return _listing_page(settings, f"{connector_id} retirée, avec les {count} élément(s) lus.")


def _listing(settings: Settings) -> dict[str, Any]:
    return {"sources": connector_views(settings)}


def _listing_page(settings: Settings, message: str, status_code: int = 200) -> Template:
    context = {"message": message, **_listing(settings)}
    return Template("_connectors.html", context=context, status_code=status_code)


def _known(call: Any) -> Any:
    try:
        return call()
    except KeyError:
        raise NotFoundException() from None


def _default_id(data: SourceForm) -> str:
    return slug_id(data.username.split("@")[0] if data.username else data.host or data.kind, data.kind)
