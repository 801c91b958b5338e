"""Hostile request paths end in 400, never in a 500 or a traceback (issue #41.8).

The server decodes ``%xx`` before the app sees the path: a NUL byte (``/static/x%00.png``) reached ``os.stat``
and raised, an overlong or invalid UTF-8 sequence became U+FFFD, ``%2e%2e`` became ``..``. This middleware, the
first the request meets, refuses such a path at once; what remains reaches the routes, whose own checks keep
every path inside the vault.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import unquote_to_bytes

from litestar.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger(__name__)
_BAD_ESCAPE = re.compile(rb"%(?![0-9A-Fa-f]{2})")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\ufffd]")
MAX_PATH = 4096


def hostile(scope: Scope) -> bool:
    """A path no page or file of ObsiRAG can have: control bytes, an invalid escape or UTF-8, a ``..`` step."""
    path: str = scope.get("path", "")
    raw: bytes = scope.get("raw_path") or path.encode("utf-8", "surrogateescape")
    if len(raw) > MAX_PATH or _BAD_ESCAPE.search(raw) or _CONTROL.search(path):
        return True
    steps = re.split(r"[/\\]", path)
    return any(step in ("..", ".") for step in steps[1:]) or not _utf8(raw)


def _utf8(raw: bytes) -> bool:
    """The raw path's escapes decode to valid UTF-8 (an overlong ``%C0%AE`` does not)."""
    try:
        unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class PathGuardMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and hostile(scope):
            log.info("refused a malformed request path (%d bytes)", len(scope.get("raw_path") or b""))
            headers = [(b"content-type", b"text/plain; charset=utf-8")]
            await send({"type": "http.response.start", "status": 400, "headers": headers})
            await send({"type": "http.response.body", "body": "Chemin de requête invalide.".encode()})
            return
        await self.app(scope, receive, send)
