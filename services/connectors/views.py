"""Connectors as the status, the dashboard and the page show them: settings and last sync, never the secret."""

from __future__ import annotations

from pydantic import BaseModel

from services.config import Settings
from services.connectors.models import KIND_LABELS, ConnectorConfig, ConnectorStatus
from services.connectors.registry import Registry


class ConnectorView(BaseModel):
    """One connector as the status, the dashboard and the page show it (never its secret)."""

    id: str
    kind: str
    kind_label: str
    label: str
    server: str
    capabilities: list[str]
    paused: bool
    every_minutes: int
    status: ConnectorStatus


def connector_views(settings: Settings) -> list[ConnectorView]:
    return [_view(config, status) for config, status in Registry(settings).statuses()]


def _view(config: ConnectorConfig, status: ConnectorStatus) -> ConnectorView:
    return ConnectorView(
        id=config.id,
        kind=config.kind,
        kind_label=KIND_LABELS[config.kind],
        label=config.label or config.id,
        server=config.server,
        capabilities=config.capabilities,
        paused=config.paused,
        every_minutes=config.every_minutes,
        status=status,
    )
