"""Conversations: the list of chat threads with local search, rename, delete and Markdown export."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.exceptions import NotFoundException
from litestar.params import Body, FromPath, FromQuery
from litestar.response import Template
from pydantic import BaseModel

from services.catalog import ConversationsTable
from services.chat.export import export_thread
from services.config import Settings
from web.dependencies import Clock
from web.page_route import page

Form = Body(media_type=RequestEncodingType.URL_ENCODED)


class RenameForm(BaseModel):
    title: str


class ConversationsController(Controller):
    path = "/conversations"

    @page("/", sync_to_thread=True)
    def index(self, conversations: NamedDependency[ConversationsTable], q: FromQuery[str] = "") -> Template:
        threads = conversations.list_threads(q.strip() or None)
        return Template("conversations.html", context={"active": "conversations", "q": q, "threads": threads})

    @page("/list", sync_to_thread=True)
    def search(self, conversations: NamedDependency[ConversationsTable], q: FromQuery[str] = "") -> Template:
        return Template("_thread_list.html", context={"q": q, "threads": conversations.list_threads(q.strip() or None)})

    @post("/{thread_id:str}/rename", sync_to_thread=True)
    def rename(
        self,
        conversations: NamedDependency[ConversationsTable],
        thread_id: FromPath[str],
        data: Annotated[RenameForm, Form],
    ) -> Template:
        if conversations.get_thread(thread_id) is None:
            raise NotFoundException()
        if data.title.strip():
            conversations.rename_thread(thread_id, data.title)
        thread = conversations.get_thread(thread_id)
        return Template("_thread_row.html", context={"thread": thread})

    @post("/{thread_id:str}/delete", sync_to_thread=True, status_code=200)
    def delete(self, conversations: NamedDependency[ConversationsTable], thread_id: FromPath[str]) -> str:
        conversations.delete_thread(thread_id)
        return ""

    @post("/{thread_id:str}/export", sync_to_thread=True)
    def export(
        self,
        conversations: NamedDependency[ConversationsTable],
        settings: NamedDependency[Settings],
        clock: NamedDependency[Clock],
        thread_id: FromPath[str],
    ) -> Template:
        """Write ``obsirag/conversations/…md`` in the vault (the only place ObsiRAG writes)."""
        thread = conversations.get_thread(thread_id)
        if thread is None or not thread.turns:
            raise NotFoundException()
        target = export_thread(settings.vault, thread, clock())
        saved = target.relative_to(settings.vault.resolve()).as_posix()
        return Template("_saved.html", context={"saved": saved})
