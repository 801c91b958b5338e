"""``/mcp`` in the web app: token (never the login cookie), no CSRF token needed, body size and rate limits."""

from __future__ import annotations

import json

import pytest
from litestar.testing import TestClient
from pydantic import SecretStr

from services.config import Settings
from web.app import create_app
from web.mcp import mcp_tokens
from web.security import AUTH_COOKIE, auth_cookie_value, web_secret

PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture(scope="module")
def guarded(web_settings: Settings) -> TestClient:
    settings = web_settings.model_copy(
        update={"web_token": SecretStr("web-token"), "mcp_rate_limit": 4, "mcp_max_request_kb": 1}
    )
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8000") as client:  # a loopback Host
        client.headers.update({"authorization": "Bearer web-token"})  # pages accept the web token
        yield client


def test_the_mcp_token_wins_over_the_web_token(web_settings: Settings) -> None:
    both = web_settings.model_copy(update={"web_token": SecretStr("w"), "mcp_token": SecretStr("m")})
    assert mcp_tokens(both) == ["m"] and mcp_tokens(web_settings) == []
    assert mcp_tokens(web_settings.model_copy(update={"web_token": SecretStr("w")})) == ["w"]


def test_token_cookie_size_and_rate_limits(guarded: TestClient, web_settings: Settings) -> None:
    # The login cookie opens the pages, not /mcp: a page in a browser cannot drive the MCP server.
    cookie = auth_cookie_value("web-token", web_secret(web_settings))
    anonymous = {**HEADERS, "authorization": ""}
    guarded.cookies.set(AUTH_COOKIE, cookie)
    assert guarded.post("/mcp", content=PING, headers=anonymous).status_code == 401
    answered = guarded.post("/mcp", content=PING, headers=HEADERS)  # no CSRF token: none is needed here
    assert answered.status_code == 400 and "Missing session ID" in answered.text  # the MCP server's own answer
    assert guarded.post("/mcp", content="x" * 2048, headers=HEADERS).status_code == 413
    statuses = [guarded.post("/mcp", content=PING, headers=HEADERS).status_code for _ in range(3)]
    assert statuses[-1] == 429
