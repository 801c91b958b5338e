"""Jinja filters and globals: times in French, provenance and backend badges, the navigation bar."""

from __future__ import annotations

import time
from datetime import datetime

from services.catalog.models import Provenance
from services.chat.prompts import WEB_STATUS
from services.llm.capability import describe
from services.llm.models import Capability

NAV = (
    ("/", "Chat", "chat"),
    ("/conversations", "Conversations", "conversations"),
    ("/notes", "Notes", "notes"),
    ("/graph", "Graphe", "graph"),
    ("/artifacts", "Artefacts", "artifacts"),
    ("/memory", "Mémoire", "memory"),
    ("/reminders", "Rappels", "reminders"),
    ("/admin", "Tableau de bord", "admin"),
)
_PROVENANCE = {
    Provenance.VAULT: "coffre",
    Provenance.WEB: "web",
    Provenance.BOTH: "web + coffre",
    Provenance.NONE: "aucune source",
}


def ago(epoch: float | None, now: float | None = None) -> str:
    """``il y a 3 s`` / ``il y a 5 min`` / ``il y a 2 h`` / ``il y a 4 j``."""
    if not epoch:
        return "jamais"
    return f"il y a {duration((now or time.time()) - epoch)}"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    seconds = max(0.0, float(seconds))
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min"
    if seconds < 86400:
        return f"{seconds // 3600:.0f} h {seconds % 3600 // 60:02.0f}"
    return f"{seconds // 86400:.0f} j"


def localtime(value: datetime | float | None, fmt: str = "%d/%m/%Y %H:%M") -> str:
    """A datetime or epoch seconds in the server's local time zone."""
    if value is None or value == "":
        return "—"
    moment = datetime.fromtimestamp(value) if isinstance(value, int | float) else value
    return moment.astimezone().strftime(fmt)


def clock(value: datetime | float | None) -> str:
    return localtime(value, "%H:%M:%S")


def provenance_label(value: Provenance | str | None) -> str:
    try:
        return _PROVENANCE[Provenance(value)]
    except ValueError:
        return str(value or "")


def web_status(value: str | None) -> str:
    """A web search asked for that failed or found nothing, said in the UI's language."""
    return WEB_STATUS[value]["fr"] if value in WEB_STATUS else ""


def backend_label(value: str | None) -> str:
    """``mlx`` → ``via MLX``; any other backend is named as it is (``via openai``)."""
    if not value:
        return ""
    return "via MLX" if value.lower() == "mlx" else f"via {value}"


def writes_label(capability: Capability | None) -> str:
    """Whether the model writes the chat's answers, and how that is known (the dashboard's line)."""
    if capability is None:
        return "—"
    return describe(capability.can_write, capability.reason, capability.passed, capability.probes)
