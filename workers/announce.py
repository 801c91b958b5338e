"""``obsirag up``'s "Web UI: http://…" line, printed once the page answers.

The web process publishes its address with its heartbeat before uvicorn serves (importing the app and
starting the server take seconds, more on a loaded machine): a line printed at start, or at the first
heartbeat, named an address that did not answer yet. This one waits for an HTTP answer at that address.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit, urlunsplit
from urllib.request import urlopen

import redis

from services.config import Settings
from services.system.processes import read_process

PROBE_TIMEOUT = 2.0
POLL_SECONDS = 0.25
_WILDCARDS = {"0.0.0.0": "127.0.0.1", "::": "::1"}  # a wildcard bind answers on loopback


def local_url(url: str) -> str:
    """``url`` as this machine reaches it: a wildcard address becomes loopback."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if host not in _WILDCARDS:
        return url
    loopback = _WILDCARDS[host]
    netloc = f"[{loopback}]:{parts.port}" if ":" in loopback else f"{loopback}:{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def answers(url: str, timeout: float = PROBE_TIMEOUT) -> bool:
    """Whether an HTTP server answers at ``url`` (any status: 401 behind a token is an answer)."""
    try:
        with urlopen(url, timeout=timeout):
            return True
    except HTTPError:
        return True
    except (URLError, OSError):  # refused, reset, timed out: not serving yet
        return False


def announce_web(settings: Settings, stop: threading.Event, echo: Callable[[str], None]) -> None:
    """Call ``echo`` with the "Web UI: …" line once the web process answers; give up when ``stop`` is set."""
    client = redis.Redis.from_url(settings.effective_redis_url, socket_timeout=PROBE_TIMEOUT)
    while not stop.is_set():
        published = _published_url(client)
        if published and answers(local_url(published)):
            shown = local_url(published)
            echo(f"Web UI: {shown}" + (f" (listening on {settings.host})" if shown != published else ""))
            return
        stop.wait(POLL_SECONDS)


def start_announcer(settings: Settings, stop: threading.Event, echo: Callable[[str], None]) -> threading.Thread:
    thread = threading.Thread(target=announce_web, args=(settings, stop, echo), name="announce-web", daemon=True)
    thread.start()
    return thread


def _published_url(client: redis.Redis) -> str | None:
    """The address in the web process's heartbeat; None while Redis or the web process is not up yet."""
    try:
        state = read_process(client, "web")
    except redis.RedisError:
        return None
    url = state.details.get("url") if state is not None else None
    return url if isinstance(url, str) else None
