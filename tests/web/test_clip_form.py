"""The artifacts page's « Importer une page web » (issue #36): the form, its CSRF guard, and a page it must not
fetch refused in one line (the clip itself is tested in tests/clipping and through `obsirag clip`)."""

from __future__ import annotations

from litestar.testing import TestClient

from services.config import Settings
from tests.support.web_app import html
from tests.support.web_pages import serving


def test_the_artifacts_page_offers_to_clip_a_page(client: TestClient) -> None:
    page = html(client, "/artifacts")
    assert 'hx-post="/artifacts/clip"' in page and 'type="url"' in page and "Importer une page web" in page


def test_a_clip_needs_the_csrf_token_and_a_page_on_this_machine_is_refused(
    client: TestClient, csrf: dict[str, str], web_settings: Settings
) -> None:
    with serving() as site:
        site.pages["/page"] = ("text/html", b"<html><body><article><p>Une page locale.</p></article></body></html>")
        forged = client.post("/artifacts/clip", data={"url": f"{site.url}/page"})
        refused = client.post("/artifacts/clip", data={"url": f"{site.url}/page"}, headers=csrf)
        assert site.asked == []  # neither request reached the page
    assert forged.status_code == 403
    assert refused.status_code == 422 and "Import impossible" in refused.text and "non-public address" in refused.text
    assert "not a web address" in client.post("/artifacts/clip", data={"url": "ftp://x.org/a"}, headers=csrf).text
    assert not (web_settings.vault / "obsirag" / "clips").exists()
