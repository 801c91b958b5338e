"""« Sources connectées » (issue #37): add a source through the form (CSRF-guarded, tested and synced at
once), sync, pause and resume, a malformed calendar said in one line with its fix, remove with its data; the
password never shown."""

from __future__ import annotations

from datetime import datetime

from litestar.testing import TestClient

from services.config import Settings
from services.connectors.registry import Registry
from tests.support.connector_data import calendar_ics, nearest
from tests.support.web_app import html
from tests.support.web_pages import serving

SECRET = "Jeton-De-Test-8841"


def test_a_calendar_is_added_synced_paused_and_removed_from_the_page(
    client: TestClient, csrf: dict[str, str], web_settings: Settings
) -> None:
    today = datetime.now().astimezone().date()
    assert "Aucune source reliée" in html(client, "/connectors")
    with serving() as site:
        site.pages["/agenda.ics"] = ("text/calendar", calendar_ics(today, nearest(1, today)).encode())
        site.pages["/casse.ics"] = ("text/calendar", b"ceci n'est pas un calendrier")
        form = {"kind": "ics", "id": "famille", "url": f"{site.url}/agenda.ics", "password": SECRET}
        assert client.post("/connectors/add", data=form).status_code == 403  # no CSRF token
        added = client.post("/connectors/add", data=form, headers=csrf)
        broken = client.post(
            "/connectors/add", data={"kind": "ics", "id": "casse", "url": f"{site.url}/casse.ics"}, headers=csrf
        )
        synced = client.post("/connectors/famille/sync", headers=csrf)
    try:
        assert added.status_code == 200 and "famille : Connexion réussie" in added.text
        assert "élément(s), synchronisée le" in synced.text
        assert "pas un calendrier ICS lisible" in broken.text and "« adresse secrète au format iCal »" in broken.text
        paused = client.post("/connectors/famille/pause", headers=csrf).text
        assert "En pause." in paused and 'hx-post="/connectors/famille/resume"' in paused
        assert Registry(web_settings).get("famille").paused  # type: ignore[union-attr]
        client.post("/connectors/famille/resume", headers=csrf)
        page = html(client, "/connectors")
        assert "Pas encore synchronisée" not in page.split('id="source-famille"')[1].split("</article>")[0]
        assert SECRET not in page and SECRET not in added.text
        assert client.post("/connectors/inconnue/sync", headers=csrf).status_code == 404
    finally:
        removed = client.post("/connectors/famille/remove", headers=csrf).text
        client.post("/connectors/casse/remove", headers=csrf)
    assert "famille retirée" in removed and Registry(web_settings).all() == []
    assert not list((web_settings.connectors_dir / "items" / "event").glob("famille/*"))
