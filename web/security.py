"""What keeps the web UI private: loopback by default, a token off loopback, CSRF secret, security headers."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import quote

from litestar.datastructures import MutableScopeHeaders
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from services.config import Settings
from services.system.startup import is_loopback, token_problem

AUTH_COOKIE = "obsirag_auth"
SECRET_FILE = "web-secret"
# Scripts only from ObsiRAG itself (no inline script, no eval); styles may be inline because Mermaid's
# SVGs carry <style> elements; images from ObsiRAG (the vault's attachments) and data: URIs.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=()",
}
PUBLIC_PREFIXES = ("/login", "/static/")


def is_public(path: str) -> bool:
    """Pages open without the token: the login form, static files, and ``/mcp`` (exactly), which checks its own
    bearer token (``web.mcp``), never the cookie."""
    return path.startswith(PUBLIC_PREFIXES) or path == "/mcp" or path.startswith("/mcp/")


class UnsafeBind(RuntimeError):
    """The web UI would listen beyond this machine without an access token."""


def check_bind(settings: Settings) -> None:
    """Refuse to serve on a non-loopback address unless ``OBSIRAG_WEB_TOKEN`` is set, or with a token of spaces."""
    if problem := token_problem(settings):
        raise UnsafeBind(problem)
    if not is_loopback(settings.host) and not _token(settings):
        raise UnsafeBind(
            f"refusing to serve the web UI on {settings.host} without OBSIRAG_WEB_TOKEN: "
            "set a token, or bind to 127.0.0.1 (the default)"
        )


def web_secret(settings: Settings) -> str:
    """The configured secret, else one generated once and kept (mode 600) in the data dir."""
    if settings.web_secret is not None and settings.web_secret.get_secret_value():
        return settings.web_secret.get_secret_value()
    path: Path = settings.data_dir / SECRET_FILE
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text(encoding="ascii").strip()
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        value = secrets.token_hex(32)
        handle.write(value)
    return value


def _token(settings: Settings) -> str:
    return settings.web_token.get_secret_value() if settings.web_token is not None else ""


def auth_cookie_value(token: str, secret: str) -> str:
    """What the login cookie holds: a MAC of the token, so the token itself never sits in a cookie."""
    return hmac.new(secret.encode(), token.encode(), hashlib.sha256).hexdigest()


def token_matches(given: str, token: str) -> bool:
    return bool(token) and hmac.compare_digest(given.encode(), token.encode())


async def add_security_headers(message: Message, scope: Scope) -> None:
    """A ``before_send`` hook: every response, even a 404 for an unknown URL, carries the CSP and friends."""
    if message["type"] == "http.response.start":
        headers = MutableScopeHeaders.from_message(message)
        for name, value in SECURITY_HEADERS.items():
            if name not in headers:
                headers[name] = value


class TokenAuthMiddleware:
    """With ``OBSIRAG_WEB_TOKEN`` set, every page needs the token: ``Authorization: Bearer``, the
    ``X-ObsiRAG-Token`` header, or the cookie the login form sets."""

    def __init__(self, app: ASGIApp, token: str, secret: str) -> None:
        self.app = app
        self.token = token
        self.cookie = auth_cookie_value(token, secret)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._allowed(scope):
            await self.app(scope, receive, send)
            return
        await _refuse(scope, send)

    def _allowed(self, scope: Scope) -> bool:
        path: str = scope["path"]
        if is_public(path):
            return True
        headers = _headers(scope)
        bearer = headers.get("authorization", "").removeprefix("Bearer ").strip()
        given = bearer or headers.get("x-obsirag-token", "")
        if given and token_matches(given, self.token):
            return True
        cookie = _cookies(headers.get("cookie", "")).get(AUTH_COOKIE, "")
        return hmac.compare_digest(cookie.encode(), self.cookie.encode())


def _headers(scope: Scope) -> dict[str, str]:
    return {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}


def _cookies(header: str) -> dict[str, str]:
    pairs = (part.strip().partition("=") for part in header.split(";") if "=" in part)
    return {name: value for name, _, value in pairs}


async def _refuse(scope: Scope, send: Send) -> None:
    """A browser asking for a page goes to the login form; anything else gets 401."""
    wants_page = scope["method"] == "GET" and "text/html" in _headers(scope).get("accept", "")
    query = scope.get("query_string", b"").decode("latin-1")
    target = scope["path"] + (f"?{query}" if query else "")
    status, headers, body = 401, [(b"content-type", b"text/plain; charset=utf-8")], b"token required"
    if wants_page:
        location = f"/login?next={quote(target, safe='')}"
        status, headers, body = 303, [(b"location", location.encode("latin-1"))], b""
    www = [(b"www-authenticate", b'Bearer realm="obsirag"')]
    await send({"type": "http.response.start", "status": status, "headers": headers + www})
    await send({"type": "http.response.body", "body": body})


def safe_next(target: Any) -> str:
    """Only local paths after a login (no open redirect to another site)."""
    value = str(target or "/")
    return value if value.startswith("/") and not value.startswith("//") and "\\" not in value else "/"
