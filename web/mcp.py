"""``/mcp``: the MCP server (``services.mcp``) over Streamable HTTP, mounted in the web app.

In front of the SDK's session manager: the bearer token (``OBSIRAG_MCP_TOKEN``, else ``OBSIRAG_WEB_TOKEN``;
never the login cookie, so a page open in a browser cannot drive it) and Litestar's per-client rate limit.
``Host`` and ``Origin`` are parsed and checked first (``web.mcp_peers``); the SDK checks them again (DNS
rebinding) and refuses oversized bodies.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from litestar import Litestar, asgi
from litestar.handlers import ASGIRouteHandler
from litestar.middleware.rate_limit import RateLimitConfig
from litestar.types import Receive, Scope, Send
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from services.config import Settings
from services.mcp.calls import CallLog
from services.mcp.server import build_server
from services.mcp.tools import VaultTools
from services.system import SystemClient
from web.mcp_peers import PeerRules
from web.security import token_matches

MCP_PATH = "/mcp"
# What the mount catches: Litestar hands it "/mcpx" too, refused in ``mcp_app``; "/notes/x/mcp" is not it (#41.7).
MCP_PATH_PATTERN = r"^/mcp"
_MCP_ROUTE = re.compile(r"/mcp/?")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
_TEXT = [(b"content-type", b"text/plain; charset=utf-8")]


def mcp_tokens(settings: Settings) -> list[str]:
    """The tokens ``/mcp`` accepts: the MCP token when set, else the web UI's, else none (loopback only)."""
    for secret in (settings.mcp_token, settings.web_token):
        if secret is not None and secret.get_secret_value():
            return [secret.get_secret_value()]
    return []


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """Loopback, the configured host and ``OBSIRAG_MCP_ALLOWED_ORIGINS``; any other Origin/Host is refused."""
    hosts = [*LOOPBACK_HOSTS, settings.host]
    origins = [f"{scheme}://{host}" for host in hosts for scheme in ("http", "https")]
    extra_hosts = [origin.split("://", 1)[-1].rstrip("/") for origin in settings.mcp_allowed_origins]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*hosts, *(f"{h}:*" for h in hosts), *extra_hosts],
        allowed_origins=[*origins, *(f"{o}:*" for o in origins), *settings.mcp_allowed_origins],
    )


class McpEndpoint:
    """The token check, then the SDK's session manager."""

    def __init__(self, manager: StreamableHTTPSessionManager, tokens: list[str], peers: PeerRules) -> None:
        self.manager = manager
        self.tokens = tokens
        self.peers = peers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        # The SDK's own statuses: 421 for a foreign Host, 403 for a foreign Origin.
        refused = 421 if not self.peers.host_allowed(headers.get("host")) else 0
        refused = refused or (403 if not self.peers.origin_allowed(headers.get("origin")) else 0)
        if refused:
            await send({"type": "http.response.start", "status": refused, "headers": _TEXT})
            await send({"type": "http.response.body", "body": b"host or origin not allowed"})
            return
        if self.tokens and not self._authorized(scope):
            headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"www-authenticate", b"Bearer")]
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": b"token required: Authorization: Bearer <token>"})
            return
        await self.manager.handle_request(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        header = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"authorization"), "")
        given = header.removeprefix("Bearer ").strip()
        return any(token_matches(given, token) for token in self.tokens)


def mcp_mount(
    settings: Settings, client: SystemClient
) -> tuple[ASGIRouteHandler, Callable[[Litestar], AbstractAsyncContextManager[None]], VaultTools]:
    """The ``/mcp`` route, the lifespan that runs its session manager, and the tools (closed on shutdown)."""
    tools = VaultTools(settings, client)
    server = build_server(tools, CallLog(client.history))
    server.streamable_http_app(
        transport_security=transport_security(settings),
        max_request_body_size=settings.mcp_max_request_kb * 1024,
        json_response=True,  # one JSON body per call: no tool streams, and an SSE stream per POST costs more
        host=settings.host,
    )
    peers = PeerRules([*LOOPBACK_HOSTS, settings.host], settings.mcp_allowed_origins)
    endpoint = McpEndpoint(server.session_manager, mcp_tokens(settings), peers)
    limit = RateLimitConfig(rate_limit=("minute", settings.mcp_rate_limit), store="mcp_rate_limit")

    @asgi(MCP_PATH, is_mount=True, copy_scope=True, middleware=[limit.middleware])
    async def mcp_app(scope: Scope, receive: Receive, send: Send) -> None:
        if not _MCP_ROUTE.fullmatch(scope["raw_path"].decode("latin-1")):
            await send({"type": "http.response.start", "status": 404, "headers": _TEXT})
            await send({"type": "http.response.body", "body": b"not found"})
            return
        await endpoint(scope, receive, send)

    @asynccontextmanager
    async def lifespan(_app: Litestar) -> AsyncIterator[None]:
        try:
            async with server.session_manager.run():
                yield
        finally:
            server.calls.close()

    return mcp_app, lifespan, tools
