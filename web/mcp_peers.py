"""Who may talk to ``/mcp``: the ``Host`` and ``Origin`` headers parsed before they are compared (issue #41.9).

The SDK's wildcard ``127.0.0.1:*`` compares by prefix, so ``Host: 127.0.0.1:8400@evil`` passed it. Here a
Host is a host name or address and an optional numeric port, nothing else; an Origin is ``http``/``https``,
that host and port, no user, path, query or fragment. Anything else is refused before the SDK is reached.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit

from pydantic import BaseModel

_HOST = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::(?P<port>[0-9]{1,5}))?")


class Peer(BaseModel):
    host: str  # lowercased; IPv6 in brackets
    port: int | None = None
    scheme: str = ""


def parse_host(value: str) -> Peer | None:
    """``host[:port]`` exactly, a port of 1–65535; ``None`` for anything else."""
    match = _HOST.fullmatch(value.strip())
    if match is None:
        return None
    port = int(match["port"]) if match["port"] else None
    if port is not None and not 0 < port < 65536:
        return None
    return Peer(host=match["host"].lower(), port=port)


def parse_origin(value: str) -> Peer | None:
    """``scheme://host[:port]`` and nothing more; ``None`` for anything else (``null`` included)."""
    try:
        parts: SplitResult = urlsplit(value.strip())
        netloc_ok = parts.netloc and "@" not in parts.netloc
        peer = parse_host(parts.netloc) if netloc_ok else None
    except ValueError:
        return None
    if peer is None or parts.scheme not in ("http", "https") or parts.path not in ("", "/"):
        return None
    if parts.query or parts.fragment or value.strip().endswith(("?", "#")):
        return None
    return peer.model_copy(update={"scheme": parts.scheme})


class PeerRules:
    """The hosts ``/mcp`` answers for (any port) and the extra origins a user allowed by name
    (``https://app.example``, or ``http://host:*`` for any port of that host)."""

    def __init__(self, hosts: list[str], extra_origins: list[str]) -> None:
        self.hosts = {h.lower() for h in hosts}
        self.origins: set[tuple[str, str, int | None]] = set()
        self.any_port: set[tuple[str, str]] = set()
        for origin in extra_origins:
            wildcard = origin.rstrip("/").endswith(":*")
            peer = parse_origin(origin.rstrip("/").removesuffix(":*") if wildcard else origin)
            if peer is None:
                continue
            if wildcard:
                self.any_port.add((peer.scheme, peer.host))
            else:
                self.origins.add((peer.scheme, peer.host, peer.port))
        # An allowed origin's host is an allowed Host too (a proxy in front of the server).
        self.extra_hosts = {o[1] for o in self.origins} | {o[1] for o in self.any_port}

    def host_allowed(self, header: str | None) -> bool:
        peer = parse_host(header) if header is not None else None
        return peer is not None and (peer.host in self.hosts or peer.host in self.extra_hosts)

    def origin_allowed(self, header: str | None) -> bool:
        """No Origin (a client that is not a browser) is allowed; a present one must parse and match."""
        if header is None:
            return True
        peer = parse_origin(header)
        if peer is None:
            return False
        named = (peer.scheme, peer.host, peer.port) in self.origins or (peer.scheme, peer.host) in self.any_port
        return peer.host in self.hosts or named
