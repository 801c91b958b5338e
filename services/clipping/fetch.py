"""Downloading from the web, only from public addresses: a page (or a redirect) pointing at this machine or the
local network (the web UI, a router's admin page) is refused, and a body past its cap is cut."""

from __future__ import annotations

import ipaddress
import socket
import time
from dataclasses import dataclass

import httpx

MAX_REDIRECTS = 5
USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"  # some sites refuse bots


@dataclass(frozen=True)
class Downloaded:
    url: str  # after redirects
    body: bytes  # empty when the type is not one asked for
    content_type: str
    charset: str | None
    cut: bool = False  # past ``max_bytes`` (or the deadline): the body is its start


class PrivateAddressError(httpx.RequestError):
    """A page on this machine or a private network, refused."""


def refuse_private_address(request: httpx.Request) -> None:
    host = request.url.host
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, request.url.port or 80)}
    except socket.gaierror as exc:
        raise httpx.ConnectError(f"cannot resolve {host}: {exc}", request=request) from exc
    for address in addresses:
        ip = ipaddress.ip_address(address.split("%")[0])
        if not ip.is_global:
            raise PrivateAddressError(f"{host} is a non-public address ({ip})", request=request)


def download(
    url: str, timeout: float, types: frozenset[str], max_bytes: int, allow_private: bool = False, accept: str = "*/*"
) -> Downloaded:
    """``url``'s body up to ``max_bytes`` when its type is one of ``types`` (else an empty body); raises httpx's
    errors (status, network, ``PrivateAddressError``). ``timeout`` bounds the whole download, not each read."""
    headers = {"User-Agent": USER_AGENT, "Accept": accept}
    hooks = {} if allow_private else {"request": [refuse_private_address]}  # every redirect is checked too
    deadline = time.monotonic() + timeout  # httpx's timeout is per read: a slow drip needs a total one
    client = httpx.Client(
        timeout=timeout, follow_redirects=True, max_redirects=MAX_REDIRECTS, headers=headers, event_hooks=hooks
    )
    with client, client.stream("GET", url) as response:
        response.raise_for_status()
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        final = str(response.url)
        if content_type not in types:
            return Downloaded(final, b"", content_type, None)
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > max_bytes or time.monotonic() > deadline:
                return Downloaded(final, bytes(body[:max_bytes]), content_type, response.charset_encoding, cut=True)
        return Downloaded(final, bytes(body), content_type, response.charset_encoding)
