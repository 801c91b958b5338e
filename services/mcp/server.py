"""The MCP server (official ``mcp`` SDK, ``MCPServer``): tools, note resources and prompts over ``VaultTools``.

``build_server`` makes one server for either transport: ``run_stdio`` (``obsirag mcp``) or the web app's
``/mcp`` mount (``web.mcp``). Every tool call is recorded in the task history (``CallLog``).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar
from urllib.parse import quote

import anyio
import mcp_types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.utilities.logging import configure_logging
from pydantic import Field

from services.catalog.models import EntityKind, NoteStatus
from services.config import Settings
from services.mcp import descriptions as text
from services.mcp.calls import CallLog
from services.mcp.notes import NoteError, SortKey
from services.mcp.schemas import (
    Answer,
    Change,
    Clip,
    EntityNotes,
    Flashcards,
    Neighbors,
    NotePage,
    NoteView,
    RememberedFact,
    SearchResults,
    SimilarNote,
)
from services.mcp.stdio import serve_stdio
from services.mcp.tools import VaultTools
from services.system import SystemNotRunning
from services.vault.models import NoteType

F = TypeVar("F", bound=Callable[..., Any])
NOTE_URI = "obsirag://note/"
RESOURCE_PAGE = 500
READ_ONLY = mcp_types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
# ask writes nothing in the vault, but keeps the question and answer as a chat thread in the catalog.
ASKS = mcp_types.ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
# clip writes a new note under obsirag/ (never a user's note) from a page on the web.
CLIPS = mcp_types.ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)

NotePath = Annotated[
    str, Field(min_length=1, max_length=1000, description="vault-relative path ('Projets/Projet Atlas.md') or title")
]
Since = Annotated[
    datetime | None, Field(description="only notes dated from this moment on (ISO 8601 date or datetime)")
]
Until = Annotated[datetime | None, Field(description="only notes dated before this moment (ISO 8601)")]


class VaultServer(MCPServer):
    """``MCPServer`` whose resource list is the vault's indexed notes (one ``obsirag://note/<path>`` each)."""

    def __init__(self, tools: VaultTools, calls: CallLog, **kwargs: Any) -> None:
        self.tools = tools
        self.calls = calls  # its owner closes it (``run_stdio``, the web app's lifespan): the last records
        super().__init__(**kwargs)

    async def _handle_list_resources(self, ctx: Any, params: mcp_types.PaginatedRequestParams | None) -> Any:
        offset = int(params.cursor) if params is not None and params.cursor and params.cursor.isdigit() else 0
        records = self.tools.catalog.list_notes(status=NoteStatus.INDEXED)
        page = records[offset : offset + RESOURCE_PAGE]
        resources = [
            mcp_types.Resource(
                uri=NOTE_URI + quote(r.path, safe="/"),
                name=r.path,
                title=r.title or r.path,
                description=text.NOTE_RESOURCE,
                mime_type="text/markdown",
            )
            for r in page
        ]
        more = offset + RESOURCE_PAGE < len(records)
        return mcp_types.ListResourcesResult(
            resources=resources, next_cursor=str(offset + RESOURCE_PAGE) if more else None
        )


def build_server(tools: VaultTools, calls: CallLog | None = None) -> VaultServer:
    configure_logging("WARNING")
    logging.getLogger("mcp").setLevel(logging.WARNING)  # its INFO lines (each session) would drown the process's log
    calls = calls or CallLog(tools.client.history)
    server = VaultServer(
        tools, calls, name="obsirag", title="ObsiRAG", instructions=text.INSTRUCTIONS, log_level="WARNING"
    )
    _add_tools(server, tools, calls)
    _add_resources(server, tools)
    _add_prompts(server, tools)
    return server


def run_stdio(settings: Settings) -> None:
    """``obsirag mcp``: serve one client on stdin/stdout until it hangs up."""
    tools = VaultTools(settings)
    server = build_server(tools)
    try:
        anyio.run(serve_stdio, server)
    finally:
        server.calls.close()
        tools.close()


def recorded(name: str, fn: F, calls: CallLog, on_loop: bool = False) -> F:
    """``fn`` as a tool: its call recorded, an expected failure turned into one clear error line.

    ``on_loop``: run on the event loop rather than in a worker thread (the SDK's way with a sync tool), for
    tools that only read the catalog and a note file: a few milliseconds, less than the two thread wake-ups
    that a loaded machine makes wait for a core. Tools that wait on the system (search, ask) keep a thread.
    """

    def call(**arguments: Any) -> Any:
        started, error = time.perf_counter(), None
        try:
            return fn(**arguments)
        except (NoteError, SystemNotRunning) as exc:
            error = exc
            raise ToolError(str(exc)) from None
        except Exception as exc:  # a timeout, a worker that died: said in one line, not a traceback
            error = exc
            raise ToolError(f"{name} failed: {type(exc).__name__}: {exc}") from exc
        finally:
            calls.record(name, arguments, started, error)

    async def call_on_loop(**arguments: Any) -> Any:
        return call(**arguments)

    return functools.wraps(fn)(call_on_loop if on_loop else call)  # type: ignore[return-value]


def _add_tools(server: MCPServer, tools: VaultTools, calls: CallLog) -> None:
    notes = tools.notes

    def search(
        query: Annotated[
            str, Field(min_length=1, max_length=2000, description="what to look for, in the user's words")
        ],
        k: Annotated[int, Field(ge=1, le=50, description="how many notes")] = 8,
        tags: Annotated[list[str] | None, Field(description="only notes with one of these tags")] = None,
        folders: Annotated[list[str] | None, Field(description="only notes under one of these folders")] = None,
        types: Annotated[list[NoteType] | None, Field(description="only these note types")] = None,
        since: Since = None,
        until: Until = None,
    ) -> SearchResults:
        return tools.search(query, k, tags, folders, types, since, until)

    def read_note(
        path: NotePath,
        heading: Annotated[str | None, Field(description="only the section under this heading")] = None,
    ) -> NoteView:
        return notes.read(path, heading)

    def list_notes(
        folder: Annotated[str | None, Field(description="only notes under this folder")] = None,
        tag: Annotated[str | None, Field(description="only notes with this tag (or a subtag)")] = None,
        type: Annotated[NoteType | None, Field(description="only this note type")] = None,
        since: Since = None,
        until: Until = None,
        sort: Annotated[SortKey, Field(description="order: path, title, or modified/created newest first")] = "path",
        limit: Annotated[int, Field(ge=1, le=200)] = 50,
        cursor: Annotated[str | None, Field(description="next_cursor of the previous page")] = None,
    ) -> NotePage:
        return notes.listing(folder, tag, type, since, until, sort, limit, cursor)

    def similar_notes(path: NotePath, k: Annotated[int, Field(ge=1, le=30)] = 8) -> list[SimilarNote]:
        return tools.similar_notes(path, k)

    def graph_neighbors(path: NotePath, depth: Annotated[int, Field(ge=1, le=2)] = 1) -> Neighbors:
        return notes.neighbors(path, depth)

    def entities(
        name: Annotated[str | None, Field(max_length=200, description="a name or part of it")] = None,
        kind: Annotated[EntityKind | None, Field(description="person, org, place or misc")] = None,
        limit: Annotated[int, Field(ge=1, le=50)] = 20,
    ) -> list[EntityNotes]:
        return notes.entities(name, kind, limit)

    def ask(
        question: Annotated[str, Field(min_length=1, max_length=2000)],
        thread_id: Annotated[str | None, Field(description="thread_id of an earlier answer, for a follow-up")] = None,
        research: Annotated[bool, Field(description="research mode: sub-questions searched in steps")] = False,
    ) -> Answer:
        return tools.ask(question, thread_id, research)

    def clip(
        url: Annotated[str, Field(min_length=8, max_length=2000, description="the page's http(s) address")],
    ) -> Clip:
        return tools.clip(url)

    def make_cards(path: NotePath) -> Flashcards:
        return tools.make_cards(path)

    def recent_changes(
        days: Annotated[float, Field(gt=0, le=3660, description="how many days back")] = 7,
        limit: Annotated[int, Field(ge=1, le=200)] = 50,
    ) -> list[Change]:
        return notes.recent_changes(days, datetime.now(UTC), limit)

    def memory_recall(
        query: Annotated[str, Field(max_length=500, description="a subject or question; empty: the latest")] = "",
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
    ) -> list[RememberedFact]:
        return tools.memory_recall(query, limit)

    published = [  # (tool, description, hints, runs on the event loop: reads the catalog and files only)
        (search, text.SEARCH, READ_ONLY, False),
        (read_note, text.READ_NOTE, READ_ONLY, True),
        (list_notes, text.LIST_NOTES, READ_ONLY, True),
        (similar_notes, text.SIMILAR_NOTES, READ_ONLY, False),
        (graph_neighbors, text.GRAPH_NEIGHBORS, READ_ONLY, True),
        (entities, text.ENTITIES, READ_ONLY, True),
        (ask, text.ASK, ASKS, False),
        (recent_changes, text.RECENT_CHANGES, READ_ONLY, True),
        (clip, text.CLIP, CLIPS, False),
        (make_cards, text.MAKE_CARDS, ASKS, False),
        (memory_recall, text.MEMORY_RECALL, READ_ONLY, False),
    ]
    for fn, description, hints, on_loop in published:
        tool = recorded(fn.__name__, fn, calls, on_loop)
        server.add_tool(tool, description=description, annotations=hints)


def _add_resources(server: MCPServer, tools: VaultTools) -> None:
    @server.resource(NOTE_URI + "{+path}", name="note", description=text.NOTE_RESOURCE, mime_type="text/markdown")
    def note(path: str) -> str:
        return _readable(tools, path)[1]


def _add_prompts(server: MCPServer, tools: VaultTools) -> None:
    @server.prompt(name="summarize_note", title="Résume cette note", description=text.SUMMARIZE_PROMPT)
    def summarize_note(path: str) -> str:
        found, body = _readable(tools, path)
        return (
            f"Résume la note « {found} » en quelques points, dans sa langue, en nommant les sections d'où "
            f"vient chaque point. N'ajoute rien qu'elle ne dise pas.\n\n---\n{body}"
        )

    @server.prompt(name="related_notes", title="Trouve les notes liées", description=text.RELATED_PROMPT)
    def related_notes(path: str) -> str:
        found = _readable(tools, path)[0]
        return (
            f"Trouve les notes liées à « {found} » : appelle `graph_neighbors` (path « {found} », depth 2) "
            f"et `similar_notes` (path « {found} »), puis présente d'abord les notes déjà liées, ensuite les "
            "notes proches sans lien (des liens à créer), chacune avec son chemin et une phrase sur le rapport."
        )


def _readable(tools: VaultTools, path: str) -> tuple[str, str]:
    """``(path, body)``, or the reason it cannot be read as the resource's or prompt's error."""
    try:
        return tools.notes.body(path)
    except NoteError as exc:
        raise ResourceError(str(exc)) from None
