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

from services.config import Language, Settings


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def startup_problem(settings: Settings, lang: Language = "fr") -> str | None:
    """The first configuration problem that would make the system fail after it started, or None."""
    if problem := token_problem(settings, lang):
        return problem
    token = settings.web_token.get_secret_value() if settings.web_token is not None else ""
    if not is_loopback(settings.host) and not token:
        return _say(
            lang,
            f"OBSIRAG_HOST={settings.host} ouvre l'interface web au-delà de cette machine : définis "
            "OBSIRAG_WEB_TOKEN (ou OBSIRAG_HOST=127.0.0.1, le défaut)",
            f"OBSIRAG_HOST={settings.host} serves the web UI beyond this machine: set OBSIRAG_WEB_TOKEN "
            "(or OBSIRAG_HOST=127.0.0.1, the default)",
        )
    if problem := data_dir_problem(settings, lang) or vault_problem(settings, lang):
        return problem
    if not _writable(settings.data_dir):
        return _say(
            lang,
            f"dossier de données non inscriptible : {settings.data_dir} (donne à OBSIRAG_DATA_DIR ou --data un "
            "dossier où cet utilisateur peut écrire)",
            f"data dir not writable: {settings.data_dir} "
            "(set OBSIRAG_DATA_DIR or --data to a folder this user may write to)",
        )
    return None


def vault_problem(settings: Settings, lang: Language = "fr") -> str | None:
    """The refusal of a vault folder that is missing or unreadable (every command: none makes a data folder
    for it)."""
    vault = settings.vault
    if not vault.is_dir():
        return _say(
            lang,
            f"coffre introuvable : {vault} (donne à OBSIRAG_VAULT ou --vault le dossier de ton coffre Obsidian)",
            f"vault not found: {vault} (set OBSIRAG_VAULT or --vault to your Obsidian vault's folder)",
        )
    if not os.access(vault, os.R_OK | os.X_OK):
        return _say(
            lang,
            f"coffre illisible : {vault} (donne à cet utilisateur le droit de le lire, ou choisis un autre dossier)",
            f"vault not readable: {vault} (give this user read access, or set OBSIRAG_VAULT to another folder)",
        )
    return None


def _say(lang: Language, fr: str, en: str) -> str:
    return en if lang == "en" else fr


def token_problem(settings: Settings, lang: Language = "fr") -> str | None:
    """A token no request can match: HTTP strips the spaces around a header value and the login form
    strips what is typed, so a token of spaces (or with spaces around it) would refuse every request."""
    for name, secret in (("OBSIRAG_WEB_TOKEN", settings.web_token), ("OBSIRAG_MCP_TOKEN", settings.mcp_token)):
        value = secret.get_secret_value() if secret is not None else ""
        if value and not value.strip():
            make = '`python -c "import secrets; print(secrets.token_urlsafe(24))"`'
            return _say(
                lang,
                f"{name} ne contient que des espaces : aucune requête ne pourrait s'en servir. Choisis un vrai "
                f"jeton (ex. {make}) ou retire la variable.",
                f"{name} holds only spaces: no request could use it. Choose a real token (e.g. {make}) or "
                "remove the variable.",
            )
        if value != value.strip():
            return _say(
                lang,
                f"{name} commence ou finit par des espaces, qu'aucune requête ne transmet : retire-les.",
                f"{name} starts or ends with spaces, which no request carries: remove them.",
            )
    return None


VAULT_RECORD = "vault.json"


def data_dir_problem(settings: Settings, lang: Language = "fr") -> str | None:
    """The refusal when ``settings.data_dir`` was made for another vault than ``settings.vault``."""
    owner = recorded_vault(settings.data_dir)
    if owner is None or owner == settings.vault:
        return None
    record = settings.data_dir / VAULT_RECORD
    return _say(
        lang,
        f"Le dossier de données {settings.data_dir} appartient au coffre {owner}, pas à {settings.vault} : leurs "
        "faits, rappels, conversations et index se mélangeraient. Lance sans --data (ni OBSIRAG_DATA_DIR) pour que "
        f"ce coffre ait le sien sous {settings.data_root}, ou donne un autre dossier ; si tu as déplacé ce coffre, "
        f"supprime {record} pour que ce dossier le suive.",
        f"The data folder {settings.data_dir} belongs to the vault {owner}, not to {settings.vault}: their facts, "
        "reminders, conversations and index would mix. Run without --data (nor OBSIRAG_DATA_DIR) so that this "
        f"vault gets its own under {settings.data_root}, or give another folder; if you moved this vault, delete "
        f"{record} so that this folder follows it.",
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
