"""The web process: the Litestar app under uvicorn, on ``OBSIRAG_HOST:OBSIRAG_PORT`` (127.0.0.1:8000).

It refuses a non-loopback address without ``OBSIRAG_WEB_TOKEN``. When the port is taken (another ObsiRAG,
a second test run) it serves on a free port instead and says so; its heartbeat carries the URL.
"""

from __future__ import annotations

import logging
import socket
import threading

import uvicorn

from services.config import Settings, load_settings
from services.lifeline import watch_parent
from web.app import create_app
from web.dependencies import WebServices
from web.security import UnsafeBind, check_bind
from workers.process import run_until_stopped, setup_logging

log = logging.getLogger(__name__)
GRACEFUL_SECONDS = 3  # open SSE streams are cut after this long on shutdown
# The knowledge graph and the note picker's list are built this long after the start, before anyone opens
# their pages: past the start's rush, when every process loads at once (a start is bound by the processor, #34).
WARM_SECONDS = 20.0


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, or on a free port when that one is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP. Without it Nagle
    # holds each small write (an SSE token, a response's last segment) for the client's delayed ACK, ~40 ms.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        if port == 0:
            raise
        log.warning("port %d is busy (%s): serving on a free port instead", port, exc)
        sock.bind((host, 0))
    sock.listen(128)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def serve(settings: Settings) -> None:
    try:
        check_bind(settings)
    except UnsafeBind as exc:
        raise SystemExit(str(exc)) from None
    services = WebServices.build(settings)
    app = create_app(settings, services)
    sock = bind(settings.host, settings.port)
    url = url_of(sock)
    log.info("web UI on %s", url)
    stop = threading.Event()
    beat = threading.Thread(
        target=run_until_stopped, args=(settings, "web", stop), kwargs={"details": lambda: {"url": url}}, daemon=True
    )
    beat.start()
    warm = threading.Timer(WARM_SECONDS, services.warm)
    warm.daemon = True
    warm.start()
    config = uvicorn.Config(
        app,
        log_level=settings.log_level.lower(),
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
        log_config=None,  # through the process's logging (setup_logging): one format, its INFO chatter quiet
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        warm.cancel()
        stop.set()
        beat.join(timeout=5)


def main() -> None:
    settings = load_settings()
    setup_logging(settings, "web")
    watch_parent()  # gone with the supervisor, even one killed -9
    serve(settings)


if __name__ == "__main__":
    main()
