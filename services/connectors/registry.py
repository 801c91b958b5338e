"""Connectors' settings (``<data>/connectors.json``), secrets and status, all in the data folder.

A secret is read from ``OBSIRAG_CONNECTOR_SECRET_<ID>`` when set, else from ``<data>/connectors/secrets.json``
(mode 0600, written by ``obsirag connect`` and the page). It is never logged, never in a status, a page or an
item: ``mirror`` masks it in what a server sends.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from pydantic import TypeAdapter

from services.config import Settings
from services.connectors.models import ConnectorConfig, ConnectorStatus
from services.vault.items import ITEMS_FOLDER, iter_item_paths

_CONFIGS = TypeAdapter(list[ConnectorConfig])
SECRETS_FILE = "secrets.json"


def secret_variable(connector_id: str) -> str:
    return "OBSIRAG_CONNECTOR_SECRET_" + connector_id.upper().replace("-", "_")


class Registry:
    """The connectors of one data folder."""

    def __init__(self, settings: Settings) -> None:
        self.data_dir = settings.data_dir
        self.root = settings.connectors_dir
        self.config_file = settings.data_dir / "connectors.json"

    # --- settings ------------------------------------------------------------------------------

    def all(self) -> list[ConnectorConfig]:
        try:
            return _CONFIGS.validate_json(self.config_file.read_bytes())
        except FileNotFoundError:
            return []

    def get(self, connector_id: str) -> ConnectorConfig | None:
        return next((c for c in self.all() if c.id == connector_id), None)

    def save(self, config: ConnectorConfig) -> None:
        """Add or replace ``config`` (by id)."""
        configs = [c for c in self.all() if c.id != config.id] + [config]
        _write(self.config_file, _CONFIGS.dump_json(configs, indent=2))

    def remove(self, connector_id: str) -> list[str]:
        """Forget a connector, its secret, state and items; returns the item paths it had (to unindex)."""
        config = self.get(connector_id)
        if config is None:
            return []
        paths = [p for p, _ in iter_item_paths(self.root, f"{config.item_kind}:{connector_id}/")]
        _write(self.config_file, _CONFIGS.dump_json([c for c in self.all() if c.id != connector_id], indent=2))
        self._set_secret(connector_id, None)
        shutil.rmtree(self.root / connector_id, ignore_errors=True)
        shutil.rmtree(self.root / ITEMS_FOLDER / config.item_kind / connector_id, ignore_errors=True)
        return paths

    # --- secrets -------------------------------------------------------------------------------

    def secret(self, connector_id: str) -> str:
        if value := os.environ.get(secret_variable(connector_id)):
            return value
        return str(self._secrets().get(connector_id, ""))

    def set_secret(self, connector_id: str, secret: str) -> None:
        self._set_secret(connector_id, secret or None)

    def _set_secret(self, connector_id: str, secret: str | None) -> None:
        secrets = self._secrets()
        if secret is None:
            secrets.pop(connector_id, None)
        else:
            secrets[connector_id] = secret
        _write(self.root / SECRETS_FILE, json.dumps(secrets).encode(), mode=0o600)

    def _secrets(self) -> dict[str, str]:
        try:
            return dict(json.loads((self.root / SECRETS_FILE).read_text()))
        except (FileNotFoundError, ValueError):
            return {}

    # --- state and status ----------------------------------------------------------------------

    def folder(self, connector_id: str) -> Path:
        return self.root / connector_id

    def status(self, connector_id: str) -> ConnectorStatus:
        try:
            return ConnectorStatus.model_validate_json((self.folder(connector_id) / "status.json").read_bytes())
        except (FileNotFoundError, ValueError):
            return ConnectorStatus(id=connector_id)

    def set_status(self, status: ConnectorStatus) -> None:
        _write(self.folder(status.id) / "status.json", status.model_dump_json(indent=2).encode())

    def statuses(self) -> list[tuple[ConnectorConfig, ConnectorStatus]]:
        return [(config, self.status(config.id)) for config in self.all()]


def _write(target: Path, data: bytes, mode: int = 0o600) -> None:
    """Written whole (aside, then renamed), private from its creation: an ICS address may be a secret too."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(temporary, mode)
    os.replace(temporary, target)
