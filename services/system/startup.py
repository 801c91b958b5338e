"""What ``obsirag up`` checks before it starts anything: each problem is one line saying what to set.

A data folder belongs to one vault: ``vault.json`` records it at the folder's first use, and a folder made
for another vault is refused (their facts, reminders, conversations and index would mix).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
from pathlib import Path

from services.config import Settings


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def startup_problem(settings: Settings) -> str | None:
    """The first configuration problem that would make the system fail after it started, or None."""
    if problem := token_problem(settings):
        return problem
    token = settings.web_token.get_secret_value() if settings.web_token is not None else ""
    if not is_loopback(settings.host) and not token:
        return (
            f"OBSIRAG_HOST={settings.host} serves the web UI beyond this machine: set OBSIRAG_WEB_TOKEN "
            "(or OBSIRAG_HOST=127.0.0.1, the default)"
        )
    if problem := data_dir_problem(settings):
        return problem
    if problem := vault_problem(settings):
        return problem
    if not _writable(settings.data_dir):
        return (
            f"data dir not writable: {settings.data_dir} "
            "(set OBSIRAG_DATA_DIR or --data to a folder this user may write to)"
        )
    return None


def vault_problem(settings: Settings) -> str | None:
    """The refusal of a vault folder that is missing or unreadable (every command: none makes a data folder
    for it)."""
    vault = settings.vault
    if not vault.is_dir():
        return f"vault not found: {vault} (set OBSIRAG_VAULT or --vault to your Obsidian vault's folder)"
    if not os.access(vault, os.R_OK | os.X_OK):
        return f"vault not readable: {vault} (give this user read access, or set OBSIRAG_VAULT to another folder)"
    return None


def token_problem(settings: Settings) -> str | None:
    """A token no request can match: HTTP strips the spaces around a header value and the login form
    strips what is typed, so a token of spaces (or with spaces around it) would refuse every request."""
    for name, secret in (("OBSIRAG_WEB_TOKEN", settings.web_token), ("OBSIRAG_MCP_TOKEN", settings.mcp_token)):
        value = secret.get_secret_value() if secret is not None else ""
        if value and not value.strip():
            return (
                f"{name} ne contient que des espaces : aucune requête ne pourrait s'en servir. Choisis un vrai "
                'jeton (ex. `python -c "import secrets; print(secrets.token_urlsafe(24))"`) ou retire la variable.'
            )
        if value != value.strip():
            return f"{name} commence ou finit par des espaces, qu'aucune requête ne transmet : retire-les."
    return None


VAULT_RECORD = "vault.json"


def data_dir_problem(settings: Settings) -> str | None:
    """The refusal when ``settings.data_dir`` was made for another vault than ``settings.vault``."""
    owner = recorded_vault(settings.data_dir)
    if owner is None or owner == settings.vault:
        return None
    return (
        f"Le dossier de données {settings.data_dir} appartient au coffre {owner}, pas à {settings.vault} : leurs "
        "faits, rappels, conversations et index se mélangeraient. Lance sans --data (ni OBSIRAG_DATA_DIR) pour que "
        f"ce coffre ait le sien sous {settings.data_root}, ou donne un autre dossier ; si tu as déplacé ce coffre, "
        f"supprime {settings.data_dir / VAULT_RECORD} pour que ce dossier le suive."
    )


def recorded_vault(data_dir: Path) -> Path | None:
    """The vault ``data_dir`` was made for; None before its first use (or a record no one can read)."""
    try:
        return Path(json.loads((data_dir / VAULT_RECORD).read_text(encoding="utf-8"))["vault"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def claim_data_dir(settings: Settings) -> None:
    """Record ``settings.vault`` as the owner of ``settings.data_dir`` once the folder exists (first use)."""
    record = settings.data_dir / VAULT_RECORD
    if not settings.data_dir.is_dir() or record.exists():
        return
    with contextlib.suppress(FileExistsError), open(record, "x", encoding="utf-8") as out:  # two starts at once
        json.dump({"vault": str(settings.vault)}, out, ensure_ascii=False)


def _writable(folder: Path) -> bool:
    """``folder`` exists and is writable, or could be created: its nearest existing parent is writable."""
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    return existing is not None and existing.is_dir() and os.access(existing, os.W_OK | os.X_OK)
