"""Mail and calendar beside the notes through ``obsirag up`` (issue #37): ``obsirag connect`` reads a real
Dovecot mailbox and a real Radicale calendar, the running system indexes them, ``obsirag search`` and the
chat find and cite them, a deleted message leaves the index at the next sync, a wrong password is one French
line with its fix in ``obsirag status`` and on the page while the rest answers, no secret is shown or
logged, and neither the servers nor the vault change."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import datetime
from urllib.parse import quote

import httpx
import pytest
from click.testing import CliRunner, Result
from markupsafe import escape

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
from tests.support.system import System
from tests.support.web_pages import serving
from workers.cli import main

pytestmark = pytest.mark.e2e


def obsirag(system: System, *args: str, stdin: str | None = None, code: int = 0) -> Result:
    where = ["--vault", str(system.settings.vault), "--data", str(system.settings.data_dir)]
    result = CliRunner().invoke(main, [*args, *where], input=stdin)
    assert result.exit_code == code, (result.output, result.exception)
    return result


def paths(system: System, *args: str) -> list[str]:
    return [hit["path"] for hit in json.loads(obsirag(system, "search", "--json", *args).stdout)]


def test_mail_and_calendar_are_searched_cited_and_synced_read_only(
    launch: Callable[[], System], dovecot: Dovecot, radicale: Radicale
) -> None:
    system = launch()
    vault = system.settings.vault
    notes_before = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    folder = f"Boite-{uuid.uuid4().hex[:6]}"
    client = dovecot.client()
    client.create(folder)
    client.logout()
    now = datetime.now().astimezone()
    uids = {name: dovecot.append(message, folder) for name, message in french_mailbox(now).items()}
    tuesday = nearest(1, now.date())
    calendar = radicale.calendar(f"perso-{uuid.uuid4().hex[:6]}")
    radicale.put(calendar, calendar_ics(now.date(), tuesday))
    mail_state, calendar_state = dovecot.state(folder), radicale.state()
    system.wait_indexed(1)

    connect = ["connect", "imap", "--host", "127.0.0.1", "--port", str(dovecot.port), "--security", "none"]
    added = obsirag(system, *connect, "--user", MAIL_USER, "--folder", folder, "--id", "perso", "--password-stdin",
                    stdin=MAIL_SECRET + "\n")  # fmt: skip
    assert "Connexion réussie : 20 message(s)" in added.stdout and "perso : 20 élément(s)" in added.stdout
    obsirag(system, "connect", "caldav", calendar, "--user", CAL_USER, "--id", "agenda", "--password-stdin",
            stdin=CAL_SECRET + "\n")  # fmt: skip

    # Searched and filtered by type, right when `connect` returned.
    found = paths(system, "rendez-vous détartrage dentiste")
    assert found and found[0].startswith("mail:perso/")
    assert all(p.startswith("mail:") for p in paths(system, "--type", "mail", "point Atlas"))
    assert all(p.startswith("event:") for p in paths(system, "--type", "event", "point Atlas"))

    # The chat answers from the mail and from the events, and cites them.
    answer = json.loads(obsirag(system, "ask", "--json", "Est-ce que j'ai une réponse du dentiste ?").stdout)
    cited = [s["title"] for s in answer["sources"]]
    assert any("rendez-vous détartrage (mail de Dr Martin" in title for title in cited), answer
    week = json.loads(obsirag(system, "ask", "--json", "Qu'est-ce que j'ai mardi ?").stdout)
    titles = " ".join(s["title"] for s in week["sources"])
    assert "Dentiste" in titles and "Point Atlas" in titles, week
    assert "Dentiste" in week["answer"] and "Point Atlas" in week["answer"]

    # A message deleted on the server leaves the index at the next sync; an unchanged one is not fetched again.
    dovecot.delete(uids["to_delete"], folder)
    synced = obsirag(system, "connectors", "sync", "perso").stdout
    assert "0 lu(s) sur le serveur, 0 ajouté(s) ou changé(s), 1 retiré(s)" in synced
    assert not any("premium" in p for p in paths(system, "--type", "mail", "offre carte premium"))
    hits = json.loads(obsirag(system, "search", "--json", "--type", "mail", "offre de carte premium").stdout)
    assert "Offre de carte premium" not in " ".join(hit["title"] for hit in hits)

    # A wrong password, an unreachable server, a malformed calendar: one French line each with its fix, in status
    # and on the page; the rest keeps answering.
    obsirag(
        system, *connect, "--user", MAIL_USER, "--id", "faux", "--password-stdin", stdin="Mauvais-Mdp-987\n", code=1
    )
    gone = free_port()
    obsirag(system, "connect", "imap", "--host", "127.0.0.1", "--port", str(gone), "--security", "none",
            "--user", MAIL_USER, "--id", "loin", "--password-stdin", stdin="x\n", code=1)  # fmt: skip
    with serving() as site:
        site.pages["/casse.ics"] = ("text/calendar", b"BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART:zzz\r\n")
        obsirag(system, "connect", "ics", f"{site.url}/casse.ics", "--id", "casse", code=1)
    status = obsirag(system, "status").stdout
    web = json.loads(obsirag(system, "status", "--json").stdout)["web_url"]
    page = httpx.get(f"{web}/connectors").text
    for line, fix in (
        (f"source faux (mail (IMAP)) : Identifiant ou mot de passe refusé par 127.0.0.1:{dovecot.port}.",
         "mot de passe d'application"),
        (f"source loin (mail (IMAP)) : Serveur injoignable : 127.0.0.1:{gone}.", "Vérifie l'adresse, le port"),
        ("source casse (agenda (ICS)) : Ce que http://127.0.0.1:", "« adresse secrète au format iCal »"),
    ):  # fmt: skip
        assert line in status and fix in status, (line, status)
        assert str(escape(line.split(" : ", 1)[1])) in page and str(escape(fix)) in page  # as Jinja escapes
    message = httpx.get(f"{web}/notes/{quote(found[0])}")  # a cited mail opens in the note viewer
    assert message.status_code == 200 and "15 janvier à 9 h 30" in message.text and "obsidian://" not in message.text
    assert paths(system, "Pain au levain")  # the vault still answers
    # Mail and events are cited and opened, not listed among the vault's notes or drawn in its graph.
    assert "rendez-vous détartrage" not in httpx.get(f"{web}/notes").text
    assert "mail:perso" not in httpx.get(f"{web}/graph").text

    # No secret anywhere it could be read; nothing written to the servers or the vault.
    shown = [status, obsirag(system, "status", "--json").stdout, page, system.log_path.read_text(errors="replace")]
    shown += [p.read_text(errors="replace") for p in system.settings.data_dir.rglob("*.log")]
    for secret in (MAIL_SECRET, CAL_SECRET, "Mauvais-Mdp-987"):
        assert all(secret not in text for text in shown), secret
    assert dovecot.state(folder) == [s for s in mail_state if s[0] != uids["to_delete"]]
    assert radicale.state() == calendar_state
    assert {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()} == notes_before

    # Removed with its data: its items leave the index.
    obsirag(system, "connectors", "remove", "perso")
    assert not any(p.startswith("mail:perso/") for p in paths(system, "rendez-vous détartrage dentiste"))
