"""Connectors read real servers (Dovecot over IMAP, Radicale over CalDAV, an ICS file over HTTP) into items
in the data folder, incrementally, without writing to the servers; failures are one French line and a fix."""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from pathlib import Path

from services.config import Settings
from services.connectors.models import ConnectorConfig
from services.connectors.registry import Registry
from services.connectors.sync import sync_connector
from services.vault import items
from tests.support.connector_data import calendar_ics, french_mailbox, nearest
from tests.support.connector_servers import (
    CAL_SECRET,
    CAL_USER,
    MAIL_SECRET,
    MAIL_USER,
    Dovecot,
    Radicale,
    free_port,
)
from tests.support.web_pages import serving


def _add(settings: Settings, config: ConnectorConfig, secret: str) -> Registry:
    registry = Registry(settings)
    registry.save(config)
    registry.set_secret(config.id, secret)
    return registry


def _mailbox(dovecot: Dovecot) -> tuple[str, dict[str, int]]:
    folder = f"Essai-{uuid.uuid4().hex[:8]}"
    client = dovecot.client()
    client.create(folder)
    client.logout()
    now = datetime.now().astimezone()
    return folder, {name: dovecot.append(message, folder) for name, message in french_mailbox(now).items()}


def _text(settings: Settings, path: str) -> str:
    return items.item_file(settings.connectors_dir, path).read_text()


def test_a_mailbox_is_read_once_incrementally_and_never_changed(settings: Settings, dovecot: Dovecot) -> None:
    folder, uids = _mailbox(dovecot)
    config = ConnectorConfig(
        id="perso", kind="imap", host="127.0.0.1", port=dovecot.port, security="none", username=MAIL_USER,
        folders=[folder],
    )  # fmt: skip
    _add(settings, config, MAIL_SECRET)
    before = dovecot.state(folder)

    first = sync_connector(settings, "perso")
    assert first.status.state == "ok", first.status
    assert (first.status.items, first.status.fetched, len(first.changed)) == (20, 20, 20)
    assert all(items.is_item(path) and path.startswith("mail:perso/") for path in first.changed)
    by_uid = {int(path.rsplit("-", 1)[1].removesuffix(".md")): path for path in first.changed}
    dentist = _text(settings, by_uid[uids["dentist"]])
    assert "Re: rendez-vous détartrage (mail de Dr Martin," in dentist and "15 janvier à 9 h 30" in dentist
    assert "prototype du vélo cargo" in _text(settings, by_uid[uids["html"]])  # HTML read as text
    assert "<b>" not in _text(settings, by_uid[uids["html"]])
    assert "devis-toiture.pdf" in _text(settings, by_uid[uids["attachment"]])

    again = sync_connector(settings, "perso")
    assert (again.status.fetched, again.changed) == (0, [])  # nothing unchanged is fetched again

    dovecot.delete(uids["to_delete"], folder)
    after_delete = dovecot.state(folder)
    third = sync_connector(settings, "perso")
    assert third.changed == [by_uid[uids["to_delete"]]] and third.status.fetched == 0
    assert not items.item_file(settings.connectors_dir, by_uid[uids["to_delete"]]).exists()
    assert third.status.items == 19
    # Read-only: no flag (\Seen…) and no message changed by the syncs.
    assert [s for s in before if s[0] != uids["to_delete"]] == after_delete == dovecot.state(folder)


def test_a_wrong_password_and_an_unreachable_server_say_one_french_line_and_never_the_secret(
    settings: Settings, dovecot: Dovecot
) -> None:
    wrong = ConnectorConfig(
        id="faux", kind="imap", host="127.0.0.1", port=dovecot.port, security="none", username=MAIL_USER
    )
    registry = _add(settings, wrong, "pas-le-bon-Mdp-123")
    status = sync_connector(settings, "faux").status
    assert status.state == "error"
    assert status.error == f"Identifiant ou mot de passe refusé par 127.0.0.1:{dovecot.port}."
    assert "mot de passe d'application" in (status.fix or "")

    gone = ConnectorConfig(id="loin", kind="imap", host="127.0.0.1", port=free_port(), security="none", username="x")
    _add(settings, gone, MAIL_SECRET)
    status = sync_connector(settings, "loin").status
    assert status.error is not None and status.error.startswith("Serveur injoignable : 127.0.0.1:")
    stored = [p.read_text() for p in settings.connectors_dir.rglob("status.json")]
    stored.append((settings.data_dir / "connectors.json").read_text())
    assert all(secret not in text for text in stored for secret in ("pas-le-bon-Mdp-123", MAIL_SECRET))
    secrets = settings.connectors_dir / "secrets.json"
    assert secrets.stat().st_mode & 0o777 == 0o600
    assert json.loads(secrets.read_text())["loin"] == MAIL_SECRET
    assert registry.secret("faux") == "pas-le-bon-Mdp-123"


def test_a_caldav_calendar_expands_recurrences_and_keeps_all_day_events(settings: Settings, radicale: Radicale) -> None:
    today = datetime.now().astimezone().date()
    tuesday = nearest(1, today)
    url = radicale.calendar(f"agenda-{uuid.uuid4().hex[:6]}")
    radicale.put(url, calendar_ics(today, tuesday))
    before = radicale.state()
    _add(settings, ConnectorConfig(id="agenda", kind="caldav", url=url, username=CAL_USER), CAL_SECRET)

    outcome = sync_connector(settings, "agenda")
    assert outcome.status.state == "ok", outcome.status
    texts = {path: _text(settings, path) for path in outcome.changed}
    yoga = [t for t in texts.values() if "Cours de yoga" in t]
    assert len(yoga) >= 4  # a weekly event: one item per occurrence in the window
    party = next(t for t in texts.values() if "Fête des voisins" in t)
    assert "all_day: true" in party and "Toute la journée" in party
    dentist = next(t for t in texts.values() if "title: Dentiste" in t)
    local = datetime.fromisoformat(dentist.split("start: '")[1].split("'")[0])
    expected = datetime.fromisoformat(f"{tuesday.isoformat()}T10:00:00+01:00").astimezone()
    assert local == expected  # Europe/Paris time, said in the machine's time zone
    assert sync_connector(settings, "agenda").changed == []
    assert radicale.state() == before  # nothing written to the server


def test_an_ics_address_is_read_and_a_malformed_one_says_so(settings: Settings, tmp_path: Path) -> None:
    today = datetime.now().astimezone().date()
    with serving() as pages:
        pages.pages["/perso.ics"] = ("text/calendar", calendar_ics(today, nearest(1, today)).encode())
        pages.pages["/casse.ics"] = ("text/calendar", b"BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART:zzz\r\n")
        _add(settings, ConnectorConfig(id="ics", kind="ics", url=f"{pages.url}/perso.ics"), "")
        _add(settings, ConnectorConfig(id="casse", kind="ics", url=f"{pages.url}/casse.ics"), "")
        good = sync_connector(settings, "ics")
        bad = sync_connector(settings, "casse")
    assert good.status.state == "ok" and good.status.items >= 6
    assert bad.status.state == "error"
    assert bad.status.error is not None and bad.status.error.startswith(f"Ce que {pages.url} envoie n'est pas")
    assert "adresse" in (bad.status.fix or "")
