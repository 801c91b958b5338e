"""Conversations: the list of chat threads with local search, rename, delete and Markdown export."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from litestar import Controller, post
from litestar.enums import RequestEncodingType
from litestar.exceptions import NotFoundException
from litestar.params import Body, FromPath, FromQuery
from litestar.response import Template
from pydantic import BaseModel

from services.chat.export import export_thread
from web.page_route import page
from web.site import SiteDep

Form = Body(media_type=RequestEncodingType.URL_ENCODED)


class RenameForm(BaseModel):
    title: str


class ConversationsController(Controller):
    path = "/conversations"

    @page("/", sync_to_thread=True)
    def index(self, site: SiteDep, q: FromQuery[str] = "") -> Template:
        threads = site.catalog.list_threads(q.strip() or None)
        return Template("conversations.html", context={"active": "conversations", "q": q, "threads": threads})

    @page("/list", sync_to_thread=True)
    def search(self, site: SiteDep, q: FromQuery[str] = "") -> Template:
        return Template("_thread_list.html", context={"q": q, "threads": site.catalog.list_threads(q.strip() or None)})

    @post("/{thread_id:str}/rename", sync_to_thread=True)
    def rename(self, site: SiteDep, thread_id: FromPath[str], data: Annotated[RenameForm, Form]) -> Template:
        if site.catalog.get_thread(thread_id) is None:
            raise NotFoundException()
        if data.title.strip():
            site.catalog.rename_thread(thread_id, data.title)
        thread = site.catalog.get_thread(thread_id)
        return Template("_thread_row.html", context={"thread": thread})

    @post("/{thread_id:str}/delete", sync_to_thread=True, status_code=200)
    def delete(self, site: SiteDep, thread_id: FromPath[str]) -> str:
        site.catalog.delete_thread(thread_id)
        return ""

    @post("/{thread_id:str}/export", sync_to_thread=True)
    def export(self, site: SiteDep, thread_id: FromPath[str]) -> Template:
        """Write ``obsirag/conversations/…md`` in the vault (the only place ObsiRAG writes)."""
        thread = site.catalog.get_thread(thread_id)
        if thread is None or not thread.turns:
            raise NotFoundException()
        target = export_thread(site.settings.vault, thread, datetime.now().astimezone())
        saved = target.relative_to(site.settings.vault.resolve()).as_posix()
        return Template("_saved.html", context={"saved": saved})
