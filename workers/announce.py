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
from services.system.instance import read_instance
from services.system.processes import read_process
from workers.cli_text import tr

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
    """Call ``echo`` with the "Web UI: …" line once the web process answers; give up when ``stop`` is set.

    Only this supervisor's web process counts (its pid in ``instance.json``): a heartbeat of another web
    server in the same Redis once had the line name a port this instance did not serve."""
    client = redis.Redis.from_url(settings.effective_redis_url, socket_timeout=PROBE_TIMEOUT)
    while not stop.is_set():
        published = _published_url(client, _our_web_pid(settings))
        if published and answers(local_url(published)):
            shown = local_url(published)
            if settings.port and urlsplit(published).port != settings.port:
                echo(
                    tr(
                        f"Le port {settings.port} est déjà pris : l’interface web sert sur {shown} à la place.",
                        f"Port {settings.port} is taken: the web UI serves on {shown} instead.",
                    )
                )
            listening = tr(f" (à l'écoute sur {settings.host})", f" (listening on {settings.host})")
            echo(tr(f"Interface web : {shown}", f"Web UI: {shown}") + (listening if shown != published else ""))
            return
        stop.wait(POLL_SECONDS)


def _our_web_pid(settings: Settings) -> int | None:
    instance = read_instance(settings.data_dir)
    web = next((c for c in instance.children if c.name == "web" and c.alive), None) if instance else None
    return web.pid if web is not None else None


def start_announcer(settings: Settings, stop: threading.Event, echo: Callable[[str], None]) -> threading.Thread:
    thread = threading.Thread(target=announce_web, args=(settings, stop, echo), name="announce-web", daemon=True)
    thread.start()
    return thread


def _published_url(client: redis.Redis, pid: int | None) -> str | None:
    """The address in the heartbeat of the web process ``pid``; None while Redis or it is not up yet."""
    if pid is None:
        return None
    try:
        state = read_process(client, "web")
    except redis.RedisError:
        return None
    url = state.details.get("url") if state is not None and state.pid == pid else None
    return url if isinstance(url, str) else None
