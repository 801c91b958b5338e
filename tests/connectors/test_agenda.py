"""The day's events in the daily briefing, in time order (issue #37), and the connector's own secret masked in
what a server sends before it is stored."""

from __future__ import annotations

from datetime import datetime, timedelta

from services.catalog import Catalog
from services.config import Settings
from services.connectors.mirror import MASK, Item, Mirror
from services.connectors.models import ConnectorConfig
from services.connectors.registry import Registry
from services.connectors.sync import sync_connector
from services.memory.briefing import gather, render
from tests.support.connector_data import calendar_ics, nearest
from tests.support.web_pages import serving


def test_the_briefing_of_a_day_lists_its_events_in_time_order(settings: Settings) -> None:
    now = datetime.now().astimezone()
    tuesday = nearest(1, now.date())
    with serving() as site:
        site.pages["/perso.ics"] = ("text/calendar", calendar_ics(now.date(), tuesday).encode())
        Registry(settings).save(ConnectorConfig(id="perso", kind="ics", url=f"{site.url}/perso.ics"))
        assert sync_connector(settings, "perso").status.state == "ok"
    catalog = Catalog(settings.catalog_path)
    dentist = datetime.fromisoformat(f"{tuesday.isoformat()}T10:00:00+01:00").astimezone()
    atlas = dentist + timedelta(hours=4, minutes=30)
    text = render(gather(settings, catalog, tuesday, now), now)
    agenda = text.split("## Agenda du jour", 1)[1].split("##", 1)[0]
    lines = [line for line in agenda.strip().splitlines() if line]
    party = ["toute la journée Fête des voisins"] if tuesday == now.date() else []  # the all-day event is today's
    assert lines[0] == "Aujourd'hui : " + ", ".join([*party, f"{dentist:%H:%M} Dentiste", f"{atlas:%H:%M} Point Atlas"])
    assert lines[1 + len(party) :] == [
        f"- {dentist:%H:%M}–{dentist + timedelta(minutes=45):%H:%M} Dentiste",
        f"- {atlas:%H:%M}–{atlas + timedelta(hours=1):%H:%M} Point Atlas (Salle Jura)",
    ]
    today = render(gather(settings, catalog, now.date(), now), now)
    assert "toute la journée Fête des voisins" in today.split("## Agenda du jour", 1)[1].split("##", 1)[0]
    empty = render(gather(settings, catalog, now.date() + timedelta(days=200), now), now)
    assert "Agenda du jour" not in empty  # no event, no section


def test_the_connectors_secret_is_masked_in_what_the_server_sent(settings: Settings) -> None:
    mirror = Mirror(settings.connectors_dir, "mail", "perso", secret="Mdp-Secret-77")
    path = mirror.put(Item("INBOX/1-1", "Accès", {"type": "mail"}, "Ton mot de passe est Mdp-Secret-77, garde-le."))
    assert path == "mail:perso/INBOX/1-1.md"
    stored = (settings.connectors_dir / "items" / "mail" / "perso" / "INBOX" / "1-1.md").read_text()
    assert "Mdp-Secret-77" not in stored and f"Ton mot de passe est {MASK}" in stored
    assert (
        mirror.put(Item("INBOX/1-1", "Accès", {"type": "mail"}, "Ton mot de passe est Mdp-Secret-77, garde-le."))
        is None
    )
