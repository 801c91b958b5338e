"""Security: inert note HTML, no path outside the vault, CSRF on every POST, loopback unless a token."""

from __future__ import annotations

import re

import pytest
from litestar.testing import TestClient
from pydantic import SecretStr

from services.config import Settings
from tests.support.web_app import html
from web.app import create_app
from web.security import AUTH_COOKIE, UnsafeBind, check_bind, web_secret
from workers.web import serve


def test_script_and_event_handlers_in_a_note_render_inert(client: TestClient) -> None:
    page = html(client, "/notes/S%C3%A9curit%C3%A9/Note%20pi%C3%A9g%C3%A9e.md")
    body = page[page.index('<div class="markdown">') :]
    assert "<script" not in body and "pwned" not in body
    assert not re.search(r"<[^>]*\son\w+\s*=", body)  # no event-handler attribute on any element
    assert not re.search(r"(href|src)=\"\s*javascript:", body)
    assert "<h1" in body  # the note itself still renders
    assert "script-src 'self'" in client.get("/notes").headers["content-security-policy"]


@pytest.mark.parametrize(
    "url",
    [
        "/notes/..%2F..%2Foutside%2Fsecret.md",
        "/notes/%2e%2e/%2e%2e/outside/secret.md",
        "/notes/%2Fetc%2Fpasswd.md",
        "/notes/Lien%20sortant.md",  # a symlink pointing out of the vault
        "/notes/Dehors/secret.md",  # a note inside a symlinked folder outside the vault
        "/notes/Sans%20fin.md",
        "/notes/.obsidian/workspace.md",
        "/vault-files/..%2Foutside%2Fsecret.png",
        "/vault-files/Dehors/secret.png",
        "/vault-files/Accueil.md",  # notes are never served raw
    ],
)
def test_paths_outside_the_vault_are_refused(client: TestClient, url: str) -> None:
    response = client.get(url)
    assert response.status_code in (400, 403, 404), url  # 400: a ".." step, refused before any route
    assert "hors du coffre" not in response.text


@pytest.mark.parametrize("url", ["/notes/a%00.md", "/vault-files/a%00.png", "/vault-files/Attachments/a%00b.png"])
def test_a_null_byte_in_a_path_is_a_clean_refusal(client: TestClient, url: str) -> None:
    """The OS refuses such a name with ValueError, which was a 500."""
    response = client.get(url, headers={"accept": "text/html"})
    assert response.status_code == 400 and "Chemin de requête invalide" in response.text


def test_attachments_inside_the_vault_are_served_sandboxed(client: TestClient) -> None:
    response = client.get("/vault-files/Attachments/schema-atlas.png")
    assert response.status_code == 200 and response.headers["content-type"] == "image/png"
    assert response.headers["content-security-policy"].startswith("sandbox")


@pytest.mark.parametrize(
    "url",
    [
        "/admin/reindex",
        "/chat/ask",
        "/conversations/abc/delete",
        "/admin/tasks/abc/retry",
        "/login",
        "/sources/mark",
        "/memory/marks/forget",
    ],
)
def test_post_without_csrf_token_is_refused(client: TestClient, url: str) -> None:
    client.get("/")  # the CSRF cookie is set, but the request carries no token
    assert client.post(url, data={"question": "x", "token": "x"}).status_code == 403
    assert client.post(url, data={"question": "x"}, headers={"x-csrftoken": "forged"}).status_code == 403


def test_security_headers_on_pages_and_errors(client: TestClient) -> None:
    for url in ("/", "/graph", "/no/such/page"):
        headers = client.get(url).headers
        assert "default-src 'self'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff" and headers["x-frame-options"] == "DENY"


def test_non_local_bind_without_token_is_refused(tmp_path) -> None:
    settings = Settings(vault=tmp_path, data_dir=tmp_path / "data", host="0.0.0.0")
    with pytest.raises(UnsafeBind):
        check_bind(settings)
    with pytest.raises(UnsafeBind):
        create_app(settings)
    with pytest.raises(SystemExit, match="OBSIRAG_WEB_TOKEN"):
        serve(settings)
    check_bind(settings.model_copy(update={"host": "127.0.0.1"}))
    check_bind(settings.model_copy(update={"host": "::1"}))
    check_bind(settings.model_copy(update={"web_token": SecretStr("s3cret")}))
    with pytest.raises(UnsafeBind, match="que des espaces"):  # on loopback too: it would refuse every request
        check_bind(settings.model_copy(update={"host": "127.0.0.1", "web_token": SecretStr("   ")}))


def test_a_token_protects_every_page(web_settings: Settings, web_catalog) -> None:
    settings = web_settings.model_copy(update={"host": "0.0.0.0", "web_token": SecretStr("s3cret")})
    with TestClient(create_app(settings)) as guarded:
        assert guarded.get("/admin").status_code == 401
        redirect = guarded.get("/graph?tag=x", headers={"accept": "text/html"}, follow_redirects=False)
        assert redirect.status_code == 303 and redirect.headers["location"] == "/login?next=%2Fgraph%3Ftag%3Dx"
        assert guarded.get("/static/app.css").status_code == 200
        assert guarded.get("/admin", headers={"authorization": "Bearer wrong"}).status_code == 401
        assert guarded.get("/admin", headers={"authorization": "Bearer s3cret"}).status_code == 200
        assert guarded.get("/admin", headers={"x-obsirag-token": "s3cret"}).status_code == 200
        form = guarded.get("/login")
        token = guarded.cookies["obsirag_csrf"]
        refused = guarded.post("/login", data={"token": "nope", "next": "/graph"}, headers={"x-csrftoken": token})
        assert refused.status_code == 401 and form.status_code == 200
        login = guarded.post(
            "/login",
            data={"token": "s3cret", "next": "//evil.example/"},
            headers={"x-csrftoken": token},
            follow_redirects=False,
        )
        assert login.status_code == 303 and login.headers["location"] == "/"  # no open redirect
        assert AUTH_COOKIE in guarded.cookies and "s3cret" not in guarded.cookies[AUTH_COOKIE]
        assert guarded.get("/admin").status_code == 200


def test_the_secret_is_generated_once_and_kept_private(tmp_path) -> None:
    settings = Settings(vault=tmp_path, data_dir=tmp_path / "data")
    first = web_secret(settings)
    assert first == web_secret(settings) and len(first) == 64
    assert (settings.data_dir / "web-secret").stat().st_mode & 0o777 == 0o600
    assert web_secret(settings.model_copy(update={"web_secret": SecretStr("given")})) == "given"
