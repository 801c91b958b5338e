"""Hostile requests (issue #41.7–9): odd paths end in a 400 or 404, never a 500; ``/mcp`` means that route only;
its ``Host`` and ``Origin`` are parsed before they are compared."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import httpx
import pytest
from litestar.testing import TestClient
from pydantic import SecretStr

from services.config import Settings
from tests.web.test_mcp_http import HEADERS, PING
from web.app import create_app
from web.mcp_peers import PeerRules, parse_host, parse_origin

PREFIXES = [
    "/", "/chat/stream/", "/conversations/", "/documents/", "/graph/", "/notes/", "/vault-files/", "/artifacts/",
    "/memory/", "/memory/marks/", "/reminders/", "/admin/", "/static/", "/sources/", "/login/", "/mcp/",
]  # fmt: skip
PAYLOADS = [
    "%00", "x%00.png", "%2e%2e/%2e%2e/etc/passwd", "..%2f..%2fsecret.md", "%2e%2e%5c%2e%2e%5csecret.md",
    "%c0%ae%c0%ae/secret.md", "%ff%fe", "%", "%zz", "%e9t%e9.md", "a%0d%0aSet-Cookie:%20x=1", "%7f",
    "..;/secret.md", "Dehors/secret.md", "Lien%20sortant.md", "Dehors%2fsecret.png", "%252e%252e%252f",
    "x" * 5000, "%ef%bf%bd", "%f0%9f%98%80.md", "%e2%80%ae.md", "./.././..", "%u002e%u002e", "a/b/../../../..",
]  # fmt: skip


@pytest.fixture(scope="module")
def door(web_settings: Settings) -> Iterator[TestClient]:
    settings = web_settings.model_copy(
        update={
            "web_token": SecretStr("web-token"),
            "mcp_rate_limit": 100_000,
            "mcp_allowed_origins": ["https://app.example", "http://proxy.lan:*"],
        }
    )
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8000") as client:
        client.headers.update({"authorization": "Bearer web-token"})
        yield client


def raw(client: TestClient, method: str, raw_path: bytes, **kwargs: object) -> httpx.Response:
    """The path sent byte for byte, as a hostile client would (httpx would otherwise normalise it)."""
    url = httpx.URL(str(client.base_url)).copy_with(raw_path=raw_path)
    return client.request(method, url, **kwargs)  # type: ignore[arg-type]


def test_hundreds_of_hostile_paths_end_in_4xx_never_a_500_nor_a_file_outside(
    door: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    answers: dict[str, int] = {}
    for prefix in PREFIXES:
        for payload in PAYLOADS:
            for method in ("GET", "POST"):
                response = raw(door, method, (prefix + payload).encode("latin-1"))
                answers[f"{method} {prefix}{payload[:40]}"] = response.status_code
                assert "hors du coffre" not in response.text and "Traceback" not in response.text
    assert len(answers) >= 700
    assert not {k: v for k, v in answers.items() if v >= 500}
    assert not [r for r in caplog.records if r.exc_info], "no request ends in a logged exception"
    assert answers["GET /static/x%00.png"] == 400 and answers["GET /notes/%c0%ae%c0%ae/secret.md"] == 400


def test_a_nul_byte_in_a_static_path_is_a_clear_400(door: TestClient) -> None:
    response = raw(door, "GET", b"/static/x%00.png")
    assert response.status_code == 400 and "Chemin de requête invalide" in response.text


def test_ordinary_accented_paths_still_reach_their_pages(door: TestClient) -> None:
    assert raw(door, "GET", b"/graph").status_code == 200
    assert raw(door, "GET", b"/notes/Cuisine/Tarte%20tatin.md").status_code in (200, 404)
    assert raw(door, "GET", b"/notes/%C3%89t%C3%A9.md").status_code == 404  # valid UTF-8: the page's own 404


def test_only_the_mcp_route_itself_skips_the_csrf_check(door: TestClient) -> None:
    """A path that merely contains ``/mcp`` (a conversation called « mcp ») still needs its CSRF token."""
    for path in ("/conversations/mcp/rename", "/conversations/mcp/delete", "/conversations/mcp/export"):
        assert door.post(path, data={"title": "x"}).status_code == 403, path
    assert door.post("/mcpx", data={"title": "x"}).status_code == 404  # the mount's neighbour is no route
    assert door.post("/mcp", content=PING, headers=HEADERS).status_code == 400  # the MCP server's own answer


def test_the_token_is_still_asked_on_paths_that_start_like_mcp(web_settings: Settings) -> None:
    settings = web_settings.model_copy(update={"web_token": SecretStr("web-token")})
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8000") as anonymous:
        assert anonymous.get("/mcpx").status_code == 401
        assert anonymous.get("/mcp-notes/x").status_code == 401
        assert anonymous.post("/mcp", content=PING, headers=HEADERS).status_code == 401  # its own bearer check


HOSTILE_HOSTS = [
    "127.0.0.1:8400@evil.com", "127.0.0.1:8400.evil.com", "127.0.0.1:abc", "evil.com#127.0.0.1",
    "127.0.0.1.evil.com", "localhost.evil.com:8000", "127.0.0.1:8000/evil", "127.0.0.1:99999", "127.0.0.1 :8000",
    "user@127.0.0.1:8000", "[::1]evil:8000", "127.0.0.1:8000?x", "", "evil.com", "127.0.0.1:8000\\@evil",
]  # fmt: skip
FINE_HOSTS = ["127.0.0.1:8000", "127.0.0.1", "localhost:8400", "LOCALHOST", "[::1]:8000", "proxy.lan:443"]
HOSTILE_ORIGINS = [
    "http://127.0.0.1:8000@evil.com", "http://127.0.0.1.evil.com", "http://127.0.0.1:8000.evil.com", "null",
    "http://evil.com#http://127.0.0.1", "file://127.0.0.1", "http://127.0.0.1:8000/path", "https://app.example.evil",
    "http://127.0.0.1:abc", "javascript://127.0.0.1", "https://app.example:8443", "https://proxy.lan:443",
    "http://127.0.0.1:8000?", "https://evil.com/?http://127.0.0.1:8000",
]  # fmt: skip
FINE_ORIGINS = [
    "http://127.0.0.1:8000", "http://localhost:8400", "https://app.example", "http://proxy.lan:8080",
    "http://[::1]:8000", "HTTPS://APP.EXAMPLE/",
]  # fmt: skip


@pytest.mark.parametrize("host", HOSTILE_HOSTS)
def test_a_hostile_host_is_refused_before_the_sdk(door: TestClient, host: str) -> None:
    response = door.post("/mcp", content=PING, headers={**HEADERS, "host": host})
    assert response.status_code in (400, 421) and "Missing session ID" not in response.text  # 400: unparsable URL


@pytest.mark.parametrize("origin", HOSTILE_ORIGINS)
def test_a_hostile_origin_is_refused_before_the_sdk(door: TestClient, origin: str) -> None:
    response = door.post("/mcp", content=PING, headers={**HEADERS, "origin": origin})
    assert response.status_code == 403 and "not allowed" in response.text


def test_legitimate_hosts_and_origins_reach_the_mcp_server() -> None:
    rules = PeerRules(["127.0.0.1", "localhost", "[::1]"], ["https://app.example", "http://proxy.lan:*"])
    assert all(rules.host_allowed(h) for h in FINE_HOSTS), [h for h in FINE_HOSTS if not rules.host_allowed(h)]
    assert all(rules.origin_allowed(o) for o in FINE_ORIGINS), [o for o in FINE_ORIGINS if not rules.origin_allowed(o)]
    assert rules.origin_allowed(None) and not rules.host_allowed(None)
    assert parse_host("LocalHost:8400") is not None and parse_host("localhost:0") is None
    assert parse_origin("http://user:pw@127.0.0.1") is None


def test_through_the_app_a_fine_origin_gets_the_mcp_servers_own_answer(door: TestClient) -> None:
    for origin in ("http://127.0.0.1:8000", "https://app.example", "http://proxy.lan:9000"):
        response = door.post("/mcp", content=PING, headers={**HEADERS, "origin": origin})
        assert response.status_code == 400 and "Missing session ID" in response.text, origin
