"""Mail over IMAP, read-only: folders opened with EXAMINE and messages fetched with ``BODY.PEEK[]``, so the
server's flags (\\Seen…) and mailboxes are never changed.

Incremental by UIDVALIDITY and UID: a sync searches the window's UIDs (``SINCE`` the first day), fetches only
those it has not read, and drops the items of UIDs gone (deleted or moved); a new UIDVALIDITY reads the
folder again.
"""

from __future__ import annotations

import contextlib
import imaplib
import re
import ssl
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import getaddresses, parsedate_to_datetime

import trafilatura

from services.connectors.french import short_day
from services.connectors.mirror import Item
from services.connectors.models import ConnectorConfig, Refused

TIMEOUT_SECONDS = 20.0
FETCH_BATCH = 50
MAX_BODY_CHARS = 20_000  # a newsletter's text beyond this says nothing the index needs


@dataclass
class FolderState:
    uidvalidity: int = 0
    uids: list[int] = field(default_factory=list)


@dataclass
class MailRead:
    """What one sync read: new items, the keys of items gone, and each folder's state after it."""

    items: list[Item] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    folders: dict[str, FolderState] = field(default_factory=dict)
    fetched: int = 0  # messages fetched from the server


def connect(config: ConnectorConfig, secret: str) -> imaplib.IMAP4:
    """Logged in (``imaplib.IMAP4.error`` when refused, ``OSError`` when unreachable)."""
    if config.security == "ssl":
        client: imaplib.IMAP4 = imaplib.IMAP4_SSL(
            config.host, config.port, ssl_context=ssl.create_default_context(), timeout=TIMEOUT_SECONDS
        )
    else:
        client = imaplib.IMAP4(config.host, config.port, timeout=TIMEOUT_SECONDS)
        if config.security == "starttls":
            client.starttls(ssl.create_default_context())
    try:
        client.login(config.username, secret)
    except imaplib.IMAP4.error:
        raise Refused() from None  # the server's words may quote the login: never kept
    return client


def read_mail(config: ConnectorConfig, secret: str, known: dict[str, FolderState], today: date) -> MailRead:
    read = MailRead()
    client = connect(config, secret)
    try:
        for folder in config.folders:
            _read_folder(client, folder, known.get(folder, FolderState()), today - timedelta(days=config.days), read)
    finally:
        with contextlib.suppress(imaplib.IMAP4.error, OSError):
            client.logout()
    return read


def test_mail(config: ConnectorConfig, secret: str) -> int:
    """One cheap read: the number of messages in the first folder."""
    client = connect(config, secret)
    try:
        typ, data = client.select(_quoted(config.folders[0]), readonly=True)
        if typ != "OK":
            raise imaplib.IMAP4.error(f"dossier introuvable : {config.folders[0]}")
        return int(data[0] or 0)
    finally:
        client.logout()


def _read_folder(client: imaplib.IMAP4, folder: str, state: FolderState, since: date, read: MailRead) -> None:
    typ, _ = client.select(_quoted(folder), readonly=True)  # EXAMINE: nothing on the server changes
    if typ != "OK":
        raise imaplib.IMAP4.error(f"dossier introuvable : {folder}")
    validity = _uidvalidity(client)
    old = set(state.uids) if validity == state.uidvalidity else set()
    if validity != state.uidvalidity:  # the server renumbered the folder: what was read is stale
        read.gone += [item_key(folder, state.uidvalidity, uid) for uid in state.uids]
    typ, data = client.uid("SEARCH", "SINCE", since.strftime("%d-%b-%Y"))  # type: ignore[arg-type]
    now = {int(u) for u in (data[0] or b"").split()} if typ == "OK" else set()
    read.gone += [item_key(folder, validity, uid) for uid in sorted(old - now)]
    new = sorted(now - old)
    for start in range(0, len(new), FETCH_BATCH):
        batch = new[start : start + FETCH_BATCH]
        typ, parts = client.uid("FETCH", ",".join(map(str, batch)), "(UID BODY.PEEK[])")
        for uid, raw in _fetched(parts):
            read.fetched += 1
            read.items.append(mail_item(item_key(folder, validity, uid), folder, raw))
    read.folders[folder] = FolderState(uidvalidity=validity, uids=sorted(now))


def _fetched(parts: list[object]) -> list[tuple[int, bytes]]:
    found = []
    for part in parts:
        if isinstance(part, tuple) and len(part) == 2:
            head, raw = part
            match = re.search(rb"UID (\d+)", head)
            if match:
                found.append((int(match[1]), bytes(raw)))
    return found


def _uidvalidity(client: imaplib.IMAP4) -> int:
    """The folder's UIDVALIDITY, from the untagged response its EXAMINE left."""
    _typ, data = client.response("UIDVALIDITY")
    return int(data[-1]) if data and data[-1] else 0


def _quoted(folder: str) -> str:
    return '"' + folder.replace("\\", "\\\\").replace('"', '\\"') + '"'


def item_key(folder: str, validity: int, uid: int) -> str:
    """An item's key: its folder, the folder's UIDVALIDITY and the message's UID."""
    safe = re.sub(r"[^\w.-]+", "_", folder).strip("._") or "dossier"
    return f"{safe}/{validity}-{uid}"


def mail_item(key: str, folder: str, raw: bytes) -> Item:
    """One message as an item: headers, its text (HTML turned to text), its attachments' names."""
    message = message_from_bytes(raw, policy=policy.default)
    assert isinstance(message, EmailMessage)
    sender = _people(message.get("From", ""))
    sent = _date(message.get("Date"))
    subject = " ".join(str(message.get("Subject", "") or "(sans objet)").split())
    attachments = [name for part in message.iter_attachments() if (name := part.get_filename())]
    title = f"{subject} (mail de {sender or 'expéditeur inconnu'}, {short_day(sent.date())})" if sent else subject
    front = {
        "type": "mail",
        "date": sent.isoformat() if sent else None,
        "from": str(message.get("From", "")),
        "to": str(message.get("To", "")),
        "folder": folder,
        "attachments": attachments,
        "message_id": str(message.get("Message-ID", "")),
    }
    lines = [f"De : {message.get('From', '')}", f"À : {message.get('To', '')}"]
    if sent:
        lines.append(f"Date : {sent:%d/%m/%Y %H:%M}")
    body = "\n".join([*lines, "", _text(message)[:MAX_BODY_CHARS]])
    if attachments:
        body += "\n\nPièces jointes : " + ", ".join(attachments)
    return Item(key=key, title=title, frontmatter={k: v for k, v in front.items() if v}, body=body)


def _people(header: str) -> str:
    names = [name or address for name, address in getaddresses([header]) if name or address]
    return ", ".join(names)


def _date(header: object) -> datetime | None:
    try:
        stamp = parsedate_to_datetime(str(header)) if header else None
    except (TypeError, ValueError):
        return None
    return stamp.astimezone() if stamp is not None and stamp.tzinfo else stamp


def _text(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, UnicodeError):  # an unknown charset: what can be read of it
        content = part.get_payload(decode=True).decode("utf-8", "replace")  # type: ignore[union-attr]
    if part.get_content_subtype() == "html":
        return trafilatura.html2txt(content) or ""
    return str(content)
