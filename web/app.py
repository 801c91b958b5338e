"""The ObsiRAG web app (Litestar + Jinja + htmx): ``create_app(settings)``.

Every URL is in ``ROUTES`` below, one controller per page (``web/pages/``). Controllers call services and
render templates; each handler is given what it uses by name (``web.dependencies``).
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from jinja2 import Environment
from litestar import Litestar, Request, Response
from litestar.config.csrf import CSRFConfig
from litestar.exceptions import HTTPException, NotFoundException, PermissionDeniedException
from litestar.middleware import DefineMiddleware
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.response import Template
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig

from services.chat import prompts
from services.config import Settings
from services.memory.wording import fact_phrase
from services.system.processes import FRENCH_NAMES
from services.system.queues import FRENCH_QUEUE_NAMES
from services.vault.addresses import heading_slug
from web import filters
from web.dependencies import WebServices, dependencies
from web.mcp import MCP_PATH_PATTERN, mcp_mount
from web.pages.admin import AdminController
from web.pages.artifacts import ArtifactsController
from web.pages.auth import LoginController
from web.pages.cards import CardsController
from web.pages.chat import ChatController
from web.pages.connectors import ConnectorsController
from web.pages.conversations import ConversationsController
from web.pages.documents import DocumentsController
from web.pages.graph import GraphController
from web.pages.marks import LearnedController, MarksController
from web.pages.memory import MemoryController
from web.pages.models import ModelsController
from web.pages.notes import NotesController, VaultFilesController
from web.pages.reminders import RemindersController
from web.path_guard import PathGuardMiddleware
from web.security import TokenAuthMiddleware, add_security_headers, check_bind, web_secret
from web.urls import file_url, note_url, source_url

WEB = Path(__file__).resolve().parent
ROUTES = [
    ChatController,  # /  /chat/…
    ConversationsController,  # /conversations…
    NotesController,  # /notes…
    VaultFilesController,  # /vault-files/…
    DocumentsController,  # /documents/… (an attachment's extracted pages)
    GraphController,  # /graph
    ArtifactsController,  # /artifacts
    MemoryController,  # /memory…
    ModelsController,  # /models…
    ConnectorsController,  # /connectors… (mail and calendars)
    CardsController,  # /cards…
    LearnedController,  # /memory/marks/… (forget what the clicks taught)
    MarksController,  # /sources/mark (a click on a cited note)
    RemindersController,  # /reminders…
    AdminController,  # /admin…
    LoginController,  # /login
]
CSRF_COOKIE = "obsirag_csrf"


def create_app(settings: Settings, services: WebServices | None = None) -> Litestar:
    """The app for ``settings`` (and ``services``, else its own); refuses a non-loopback host without a token
    (``UnsafeBind``)."""
    check_bind(settings)
    services = services or WebServices.build(settings)
    secret = web_secret(settings)
    middleware: list[Any] = [PathGuardMiddleware]  # first: a hostile path never reaches a route (issue #41.8)
    if settings.web_token is not None and settings.web_token.get_secret_value():
        token = settings.web_token.get_secret_value()
        middleware.append(DefineMiddleware(TokenAuthMiddleware, token=token, secret=secret))
    static = create_static_files_router(path="/static", directories=[WEB / "static"], name="static")
    mcp_route, mcp_lifespan, mcp_tools = mcp_mount(settings, services.client)  # /mcp: the MCP server, Streamable HTTP
    return Litestar(
        route_handlers=[*ROUTES, static, mcp_route],
        dependencies=dependencies(services),
        template_config=TemplateConfig(
            directory=WEB / "templates", engine=JinjaTemplateEngine, engine_callback=_configure_jinja
        ),
        csrf_config=CSRFConfig(
            secret=secret,
            cookie_name=CSRF_COOKIE,
            header_name="x-csrftoken",
            cookie_samesite="strict",
            exclude=[MCP_PATH_PATTERN],  # no cookie there: a bearer token and the Origin check (web.mcp)
        ),
        middleware=middleware,
        before_send=[add_security_headers],
        exception_handlers={HTTPException: _error_page},
        lifespan=[mcp_lifespan],
        on_shutdown=[services.close, mcp_tools.close],
        debug=False,
        logging_config=None,  # the web process's own logging (workers.process.setup_logging) stays in place
    )


def _configure_jinja(engine: JinjaTemplateEngine) -> None:
    env: Environment = engine.engine
    env.trim_blocks = env.lstrip_blocks = True
    env.filters.update(
        ago=filters.ago,
        clock=filters.clock,
        duration=filters.duration,
        filesize=filters.filesize,
        role_label=partial(filters.french, words=filters.ROLES),
        localtime=filters.localtime,
        note_url=note_url,
        source_url=source_url,
        file_url=file_url,
        slug=heading_slug,
        provenance=filters.provenance_label,
        outcome=filters.outcome_label,
        outcome_why=filters.outcome_why,
        backend=filters.backend_label,
        web_status=filters.web_status,
        fact_phrase=fact_phrase,
        fact_kind=partial(filters.french, words=filters.FACT_KINDS),
        fact_status=partial(filters.french, words=filters.FACT_STATUSES),
        fact_source=partial(filters.french, words=filters.FACT_SOURCES),
        note_status=partial(filters.french, words=filters.NOTE_STATUSES),
        process_label=partial(filters.french, words=FRENCH_NAMES),
        queue_label=partial(filters.french, words=FRENCH_QUEUE_NAMES),
        learn_outcome=partial(filters.french, words=filters.LEARN_OUTCOMES),
        note_type=partial(filters.french, words=filters.NOTE_TYPES),
        run_kind=partial(filters.french, words=filters.RUN_KINDS),
        task_label=filters.task_label,
        error_message=filters.error_message,
        decimal=filters.decimal,
        catalog_message=filters.catalog_message,
        evidence_label=partial(filters.french, words=filters.EVIDENCE),
        writes=filters.writes_label,
    )
    env.globals.update(
        now=datetime.now,
        NAV=filters.NAV,
        features_label=filters.features_label,
        CONTINUE_QUESTION=prompts.CONTINUE["fr"],
        QUOTED_LABEL=prompts.QUOTED_LABEL["fr"],
    )


def _error_page(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    status = exc.status_code
    titles = {404: "Page introuvable", 403: "Accès refusé", 401: "Connexion requise"}
    message = titles.get(status, "Erreur")
    if isinstance(exc, PermissionDeniedException) and "CSRF" in str(exc.detail):
        message = "Jeton CSRF invalide : recharge la page puis réessaie."
    if isinstance(exc, NotFoundException) or "text/html" in request.headers.get("accept", ""):
        return Template("error.html", context={"status": status, "message": message}, status_code=status)
    return Response({"status_code": status, "detail": message}, status_code=status)
