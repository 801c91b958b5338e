"""One connector's sync: read its server, write its items, keep its state and status, say what failed.

Whatever goes wrong becomes one French line and its fix in the status (never the secret, never the
server's words, which may quote the login); the items already read stay indexed until a sync succeeds.
"""

from __future__ import annotations

import json
import logging
import socket
import ssl
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

import httpx

from services.config import Settings
from services.connectors.calendar import read_events, test_calendar
from services.connectors.mail import FolderState, item_key, read_mail, test_mail
from services.connectors.mirror import Mirror
from services.connectors.models import ConnectorConfig, ConnectorStatus, MalformedCalendar, Refused
from services.connectors.registry import Registry

log = logging.getLogger(__name__)


@dataclass
class SyncOutcome:
    status: ConnectorStatus
    changed: list[str] = field(default_factory=list)  # item paths written or dropped: to index


def sync_connector(settings: Settings, connector_id: str, now: datetime | None = None) -> SyncOutcome:
    """Sync ``connector_id`` now (a paused one is only said paused)."""
    registry = Registry(settings)
    config = registry.get(connector_id)
    if config is None:
        raise KeyError(connector_id)
    now = now or datetime.now().astimezone()
    status = registry.status(connector_id).model_copy(update={"last_try": now})
    if config.paused:
        status.state = "paused"
        registry.set_status(status)
        return SyncOutcome(status)
    secret = registry.secret(connector_id)
    mirror = Mirror(settings.connectors_dir, config.item_kind, connector_id, secret)
    try:
        changed, fetched = _read(registry, config, secret, mirror, now)
    except Exception as exc:  # whatever the server does, one line and its fix; the rest goes on
        status.error, status.fix = describe(exc, config)
        status.state = "error"
        log.warning("connecteur %s : %s (%s)", connector_id, status.error, type(exc).__name__)
        registry.set_status(status)
        return SyncOutcome(status)
    present = mirror.present()
    added = sum(path in present for path in changed)
    update = {"state": "ok", "last_sync": now, "items": len(present), "fetched": fetched, "added": added}
    status = status.model_copy(update={**update, "removed": len(changed) - added, "error": None, "fix": None})
    registry.set_status(status)
    return SyncOutcome(status, changed)


def test_connector(settings: Settings, config: ConnectorConfig, secret: str) -> tuple[bool, str]:
    """One cheap read of ``config``'s server: (True, what it holds) or (False, the line and its fix), a failure
    kept in the status as a sync's would be (the page and ``obsirag status`` say it until a sync succeeds)."""
    try:
        if config.kind == "imap":
            count = test_mail(config, secret)
            return True, f"Connexion réussie : {count} message(s) dans {config.folders[0]}."
        count = test_calendar(config, secret, datetime.now().astimezone())
        return True, f"Connexion réussie : {count} événement(s) dans la période lue."
    except Exception as exc:
        registry = Registry(settings)
        error, fix = describe(exc, config)
        update = {"state": "error", "error": error, "fix": fix, "last_try": datetime.now().astimezone()}
        registry.set_status(registry.status(config.id).model_copy(update=update))
        return False, f"{error} {fix}"


def _read(
    registry: Registry, config: ConnectorConfig, secret: str, mirror: Mirror, now: datetime
) -> tuple[list[str], int]:
    if config.kind == "imap":
        return _read_mail(registry, config, secret, mirror, now)
    items = read_events(config, secret, now)
    kept = {mirror.path(item.key) for item in items}
    changed = [path for item in items if (path := mirror.put(item)) is not None]
    for path in sorted(mirror.present() - kept):  # moved, cancelled or out of the window
        mirror.drop(path)
        changed.append(path)
    return changed, len(items)


def _read_mail(
    registry: Registry, config: ConnectorConfig, secret: str, mirror: Mirror, now: datetime
) -> tuple[list[str], int]:
    state_file = registry.folder(config.id) / "imap.json"
    known = _folders(state_file)
    read = read_mail(config, secret, known, now.date())
    changed = [path for item in read.items if (path := mirror.put(item)) is not None]
    kept = {mirror.path(key) for key in _keys(read.folders)}
    for path in sorted(mirror.present() - kept):  # deleted on the server, or a folder no longer read
        mirror.drop(path)
        changed.append(path)
    state_file.parent.mkdir(parents=True, exist_ok=True)
    state_file.write_text(json.dumps({name: asdict(state) for name, state in read.folders.items()}))
    return changed, read.fetched


def _folders(state_file: Path) -> dict[str, FolderState]:
    try:
        data = json.loads(state_file.read_text())
    except (FileNotFoundError, ValueError):
        return {}
    return {name: FolderState(**value) for name, value in data.items()}


def _keys(folders: dict[str, FolderState]) -> list[str]:
    return [item_key(name, state.uidvalidity, uid) for name, state in folders.items() for uid in state.uids]


def describe(exc: BaseException, config: ConnectorConfig) -> tuple[str, str]:
    """The French line saying what failed, and its fix."""
    server = config.server
    if isinstance(exc, Refused):
        return (
            f"Identifiant ou mot de passe refusé par {server}.",
            "Vérifie-les ; chez Gmail, iCloud ou Outlook, crée un mot de passe d'application et donne-le ici.",
        )
    if isinstance(exc, MalformedCalendar):
        return (
            f"Ce que {server} envoie n'est pas un calendrier ICS lisible ({exc}).",
            "Vérifie l'adresse : elle doit mener au fichier .ics (l'« adresse secrète au format iCal »).",
        )
    if isinstance(exc, (OSError, httpx.TransportError, socket.timeout, ssl.SSLError)):
        return (
            f"Serveur injoignable : {server}.",
            "Vérifie l'adresse, le port et ta connexion ; la prochaine synchro réessaiera d'elle-même.",
        )
    if isinstance(exc, httpx.HTTPStatusError):
        return (
            f"{server} a répondu {exc.response.status_code} à la lecture.",
            "Vérifie l'adresse du calendrier ; le reste d'ObsiRAG continue sans lui.",
        )
    return (f"La synchro a échoué ({type(exc).__name__}).", "Regarde le journal d'ObsiRAG (obsirag.log).")
