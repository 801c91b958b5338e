"""``obsirag connect imap|caldav|ics`` and ``obsirag connectors list|sync|pause|resume|remove``: mail and
calendars read beside the vault (issue #37). A password is never an argument (it would show in ``ps``): it
is asked without echo, read from stdin with ``--password-stdin``, or taken from
``OBSIRAG_CONNECTOR_SECRET_<ID>``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

import click

from services.config import Settings
from services.connectors.models import slug_id
from workers.cli_text import JSON_HELP, example, tr

ID_HELP = tr(
    "Nom court de la source (défaut : tiré du serveur).", "Short name of the source (default: from the server)."
)


def _source_options(command: Callable[..., Any]) -> Callable[..., Any]:
    command = click.option("--id", "connector_id", metavar="ID", help=ID_HELP)(command)
    command = click.option("--label", default="", metavar=tr("NOM", "NAME"), help=tr("Nom affiché.", "Shown name."))(
        command
    )
    command = click.option(
        "--every", default=15, type=click.IntRange(1, 1440), metavar="MIN",
        help=tr("Minutes entre deux synchros (défaut 15).", "Minutes between two syncs (default 15)."),
    )(command)  # fmt: skip
    return click.option(
        "--password-stdin", is_flag=True,
        help=tr("Lit le mot de passe sur l'entrée standard.", "Read the password from standard input."),
    )(command)  # fmt: skip


def _secret(connector_id: str, from_stdin: bool, needed: bool) -> str:
    from services.connectors.registry import secret_variable

    if from_stdin:
        return sys.stdin.readline().rstrip("\n")
    if os.environ.get(secret_variable(connector_id)) or not needed:
        return ""  # read from the environment at each sync, never stored
    return str(click.prompt(tr("Mot de passe", "Password"), hide_input=True))


def _add(settings: Settings, fields: dict[str, Any], secret: str) -> None:
    from services.connectors.models import ConnectorConfig
    from services.system.connectors import add_connector, sync_now

    try:
        config = ConnectorConfig(**fields)
    except ValueError as exc:
        raise click.ClickException(str(exc).splitlines()[-1]) from None
    answered, line = add_connector(settings, config, secret)
    click.echo(line)
    if not answered:  # kept, its failure in the status: fix it, then `obsirag connectors sync`
        click.get_current_context().exit(1)
    click.echo(_status_line(config.id, sync_now(settings, config.id).model_dump(mode="json")))


def _status_line(connector_id: str, status: dict[str, Any]) -> str:
    if status["state"] == "error":
        return f"{connector_id} : {status['error']} {status['fix']}"
    if status["state"] == "paused":
        return tr(f"{connector_id} : en pause", f"{connector_id}: paused")
    return tr(
        f"{connector_id} : {status['items']} élément(s), {status['fetched']} lu(s) sur le serveur, "
        f"{status['added']} ajouté(s) ou changé(s), {status['removed']} retiré(s)",
        f"{connector_id}: {status['items']} item(s), {status['fetched']} read from the server, "
        f"{status['added']} added or changed, {status['removed']} removed",
    )


def register_connect(main: click.Group, common_options: Any) -> None:
    @main.group(
        help=tr(
            "Relie une boîte mail (IMAP) ou un agenda (CalDAV, adresse ICS), lus sans jamais rien y écrire.",
            "Connect a mailbox (IMAP) or a calendar (CalDAV, ICS address), read without ever writing to it.",
        )
    )
    def connect() -> None:
        pass

    @connect.command(
        "imap",
        help=tr("Relie une boîte mail par IMAP (lecture seule).", "Connect a mailbox over IMAP (read-only)."),
        epilog=example("obsirag connect imap --host imap.fastmail.com --user moi@fastmail.com"),
    )
    @click.option("--host", required=True, metavar=tr("SERVEUR", "SERVER"), help=tr("Serveur IMAP.", "IMAP server."))
    @click.option(
        "--port", default=993, type=click.IntRange(1, 65535), metavar="PORT", help=tr("Port (993).", "Port (993).")
    )
    @click.option(
        "--security", default="ssl", type=click.Choice(["ssl", "starttls", "none"]),
        help=tr("Chiffrement de la connexion.", "Connection encryption."),
    )  # fmt: skip
    @click.option("--user", required=True, metavar=tr("IDENTIFIANT", "LOGIN"), help=tr("Identifiant.", "Login."))
    @click.option(
        "--folder", "folders", multiple=True, metavar=tr("DOSSIER", "FOLDER"),
        help=tr("Dossier à lire (répétable ; défaut INBOX).", "Folder to read (repeatable; default INBOX)."),
    )  # fmt: skip
    @click.option(
        "--days", default=30, type=click.IntRange(1, 3650), metavar=tr("JOURS", "DAYS"),
        help=tr("Mails des N derniers jours (30).", "Mail of the last N days (30)."),
    )  # fmt: skip
    @_source_options
    @common_options
    def imap(settings: Settings, connector_id: str | None, password_stdin: bool, **fields: Any) -> None:
        connector_id = connector_id or slug_id(fields["user"].split("@")[0])
        secret = _secret(connector_id, password_stdin, needed=True)
        fields["folders"] = list(fields["folders"]) or ["INBOX"]
        fields["username"], fields["every_minutes"] = fields.pop("user"), fields.pop("every")
        _add(settings, {"id": connector_id, "kind": "imap", **fields}, secret)

    @connect.command(
        "caldav",
        help=tr("Relie un agenda CalDAV (lecture seule).", "Connect a CalDAV calendar (read-only)."),
        epilog=example("obsirag connect caldav https://caldav.fastmail.com/dav/calendars/user/moi@fastmail.com/"),
    )
    @click.argument("url")
    @click.option("--user", required=True, metavar=tr("IDENTIFIANT", "LOGIN"), help=tr("Identifiant.", "Login."))
    @_source_options
    @common_options
    def caldav(settings: Settings, url: str, connector_id: str | None, password_stdin: bool, **fields: Any) -> None:
        connector_id = connector_id or slug_id(fields["user"].split("@")[0] + "-agenda")
        secret = _secret(connector_id, password_stdin, needed=True)
        base = {"id": connector_id, "kind": "caldav", "url": url, "username": fields["user"]}
        _add(settings, {**base, "label": fields["label"], "every_minutes": fields["every"]}, secret)

    @connect.command(
        "ics",
        help=tr("Relie un agenda publié en ICS (lecture seule).", "Connect a calendar published as ICS (read-only)."),
        epilog=example("obsirag connect ics https://calendar.google.com/calendar/ical/…/basic.ics"),
    )
    @click.argument("url")
    @_source_options
    @common_options
    def ics(settings: Settings, url: str, connector_id: str | None, password_stdin: bool, **fields: Any) -> None:
        from urllib.parse import urlsplit

        connector_id = connector_id or slug_id((urlsplit(url).hostname or "agenda").split(".")[0] + "-ics")
        secret = _secret(connector_id, password_stdin, needed=False)
        base = {"id": connector_id, "kind": "ics", "url": url, "label": fields["label"]}
        _add(settings, {**base, "every_minutes": fields["every"]}, secret)


def register_connectors(main: click.Group, common_options: Any) -> None:
    @main.group(
        help=tr(
            "Les sources reliées (mail, agendas) : liste, synchro, pause, retrait.",
            "Connected sources (mail, calendars): list, sync, pause, remove.",
        )
    )
    def connectors() -> None:
        pass

    @connectors.command(
        "list",
        help=tr("Chaque source, sa dernière synchro et ce qui a échoué.", "Each source, its last sync, what failed."),
        epilog=example("obsirag connectors list --json"),
    )
    @click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
    @common_options
    def list_(settings: Settings, as_json: bool) -> None:
        from services.connectors.views import connector_views

        views = connector_views(settings)
        if as_json:
            click.echo(json.dumps([v.model_dump(mode="json") for v in views], ensure_ascii=False, indent=2))
            return
        if not views:
            click.echo(tr("Aucune source reliée : obsirag connect imap|caldav|ics …", "No source: obsirag connect …"))
        for view in views:
            click.echo(f"{view.id} — {view.kind_label}, {view.server}")
            click.echo("  " + _status_line(view.id, view.status.model_dump(mode="json")))

    @connectors.command(
        "sync",
        help=tr("Synchronise maintenant (toutes, ou celle nommée).", "Sync now (all, or the one named)."),
        epilog=example("obsirag connectors sync perso"),
    )
    @click.argument("connector_id", required=False, metavar="ID")
    @common_options
    def sync(settings: Settings, connector_id: str | None) -> None:
        from services.connectors.registry import Registry
        from services.system.connectors import sync_now

        names = [connector_id] if connector_id else [c.id for c in Registry(settings).all()]
        for name in names:
            click.echo(_status_line(name, _known(lambda n=name: sync_now(settings, n)).model_dump(mode="json")))

    for name, paused, french, english in (
        ("pause", True, "Suspend les synchros d'une source.", "Pause a source's syncs."),
        ("resume", False, "Reprend les synchros d'une source.", "Resume a source's syncs."),
    ):
        _pause_command(connectors, common_options, name, paused, tr(french, english))

    @connectors.command(
        "remove",
        help=tr("Retire une source et tout ce qui en a été lu.", "Remove a source and everything read from it."),
        epilog=example("obsirag connectors remove perso"),
    )
    @click.argument("connector_id", metavar="ID")
    @common_options
    def remove(settings: Settings, connector_id: str) -> None:
        from services.system.connectors import remove_connector

        count = remove_connector(settings, connector_id)
        click.echo(
            tr(f"{connector_id} retirée ({count} élément(s) oubliés).", f"{connector_id} removed ({count} items).")
        )


def _pause_command(group: click.Group, common_options: Any, name: str, paused: bool, text: str) -> None:
    @group.command(name, help=text, epilog=example(f"obsirag connectors {name} perso"))
    @click.argument("connector_id", metavar="ID")
    @common_options
    def command(settings: Settings, connector_id: str) -> None:
        from services.system.connectors import set_paused

        _known(lambda: set_paused(settings, connector_id, paused))
        click.echo(
            tr(f"{connector_id} : en pause.", f"{connector_id}: paused.")
            if paused
            else tr(f"{connector_id} : reprise.", f"{connector_id}: resumed.")
        )


def _known(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except KeyError as exc:
        raise click.ClickException(tr(f"aucune source nommée {exc}", f"no source named {exc}")) from None
