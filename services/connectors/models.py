"""What a connector is (its settings) and how its last sync went (its status)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, field_validator

Kind = Literal["imap", "caldav", "ics"]
Security = Literal["ssl", "starttls", "none"]
KIND_LABELS = {"imap": "mail (IMAP)", "caldav": "agenda (CalDAV)", "ics": "agenda (ICS)"}
ID_PATTERN = r"^[a-z0-9][a-z0-9-]{0,31}$"


def slug_id(text: str, fallback: str = "source") -> str:
    """A connector id made from a login, a host or a name (``Camille.Martin`` → ``camille-martin``)."""
    return (re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or fallback)[:32]


class ConnectorConfig(BaseModel):
    """One connected source, as ``<data>/connectors.json`` keeps it (its secret is kept apart)."""

    id: str = Field(pattern=ID_PATTERN)
    kind: Kind
    label: str = ""
    url: str = ""  # CalDAV collection or ICS address
    host: str = ""  # IMAP
    port: int = Field(993, ge=1, le=65535)
    security: Security = "ssl"
    username: str = ""
    folders: list[str] = Field(default_factory=lambda: ["INBOX"])
    days: int = Field(30, ge=1, le=3650)  # mail of the last N days; past events of the last N days
    ahead_days: int = Field(60, ge=1, le=3650)  # events of the coming N days
    every_minutes: int = Field(15, ge=1, le=24 * 60)
    paused: bool = False
    write: bool = False  # the optional write capability; off unless the user turns it on

    @field_validator("folders")
    @classmethod
    def _some_folder(cls, folders: list[str]) -> list[str]:
        cleaned = [f.strip() for f in folders if f.strip()]
        return cleaned or ["INBOX"]

    @property
    def capabilities(self) -> list[str]:
        return ["read", "write"] if self.write else ["read"]

    @property
    def item_kind(self) -> str:
        """The items it yields: ``mail`` or ``event``."""
        return "mail" if self.kind == "imap" else "event"

    @property
    def server(self) -> str:
        """Where it reads, said without any secret (an ICS address's path may be one: only its host)."""
        if self.kind == "imap":
            return f"{self.host}:{self.port}"
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


State = Literal["never", "ok", "error", "paused"]


class ConnectorStatus(BaseModel):
    """The last sync of one connector: what the dashboard, ``obsirag status`` and the page show."""

    id: str
    state: State = "never"
    last_try: datetime | None = None
    last_sync: datetime | None = None  # the last one that succeeded
    items: int = 0
    fetched: int = 0  # items read from the server at the last sync (an unchanged source: 0)
    added: int = 0
    removed: int = 0
    error: str | None = None  # one French line
    fix: str | None = None  # what to do about it


class Refused(Exception):
    """The server refused the login or password (no server text kept: it may quote them)."""


class MalformedCalendar(ValueError):
    """What the server sent is no readable iCalendar data."""
