"""Connected sources in the running system: the extractor process syncs them on the ``connect`` queue (every
minute it syncs those due, and any on demand), queues what changed for the indexer, and every surface
(CLI, web page, dashboard, MCP) adds, tests, syncs, pauses and removes them through here."""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta
from typing import Any, Literal

from huey.exceptions import HueyException

from services.catalog import Catalog
from services.config import Settings
from services.connectors.models import ConnectorConfig, ConnectorStatus
from services.connectors.registry import Registry
from services.connectors.sync import sync_connector, test_connector
from services.system.client import SystemClient
from services.system.queues import EVENT_PRIORITY, Queues
from services.vault.items import item_file

log = logging.getLogger(__name__)

SYNC_WAIT_SECONDS = 120.0


class ConnectorHandlers:
    """The ``connect`` queue's tasks, served by the extractor process."""

    kind: Literal["connectors"] = "connectors"

    def __init__(self, settings: Settings, queues: Queues) -> None:
        self.settings = settings
        self.queues = queues

    def sync_connector(self, connector_id: str) -> dict[str, Any]:
        outcome = sync_connector(self.settings, connector_id)
        if outcome.changed:  # the indexer reads them like a user's edits: before any bulk reindex
            self.queues.enqueue_paths(outcome.changed, self.settings.index_batch_notes, EVENT_PRIORITY)
        return {"status": outcome.status.model_dump(mode="json"), "changed": outcome.changed}

    def connect_tick(self) -> dict[str, Any]:
        """Sync each connector whose period has passed since its last try (paused ones never)."""
        now = datetime.now().astimezone()
        registry = Registry(self.settings)
        done = {}
        for config, status in registry.statuses():
            if not config.paused and _due(config, status, now):
                done[config.id] = self.sync_connector(config.id)["status"]["state"]
        return done


def _due(config: ConnectorConfig, status: ConnectorStatus, now: datetime) -> bool:
    return status.last_try is None or now - status.last_try >= timedelta(minutes=config.every_minutes)


# --- what the CLI and the web page call --------------------------------------------------------------


def add_connector(settings: Settings, config: ConnectorConfig, secret: str) -> tuple[bool, str]:
    """Keep ``config`` and its secret, then test it: (whether the server answered, the line saying so)."""
    registry = Registry(settings)
    registry.save(config)
    if secret:
        registry.set_secret(config.id, secret)
    return test_connector(settings, config, registry.secret(config.id))


def test_saved(settings: Settings, connector_id: str) -> tuple[bool, str]:
    registry = Registry(settings)
    config = registry.get(connector_id)
    if config is None:
        raise KeyError(connector_id)
    return test_connector(settings, config, registry.secret(connector_id))


def sync_now(settings: Settings, connector_id: str, wait: float = SYNC_WAIT_SECONDS) -> ConnectorStatus:
    """Sync through the running system and wait until what changed is indexed; without a running system,
    sync here (the next start's reconcile indexes the items)."""
    if Registry(settings).get(connector_id) is None:
        raise KeyError(connector_id)
    client = SystemClient(settings)
    if not client.running():
        return sync_connector(settings, connector_id).status
    deadline = time.monotonic() + wait
    try:
        result = client.queues.sync_connector(connector_id).get(blocking=True, timeout=wait)
    except HueyException as exc:  # the task failed or did not end in time: what the status file says
        log.warning("sync of %s: %s", connector_id, type(exc).__name__)
        return Registry(settings).status(connector_id)
    wait_items_indexed(settings, result["changed"], max(1.0, deadline - time.monotonic()))
    return ConnectorStatus.model_validate(result["status"])


def wait_items_indexed(settings: Settings, paths: list[str], wait: float) -> bool:
    """True once the catalog agrees with each item (indexed if its file exists, gone if not)."""
    catalog = Catalog(settings.catalog_path)
    deadline = time.monotonic() + wait
    try:
        while time.monotonic() < deadline:
            if all(_indexed(catalog, path, item_file(settings.connectors_dir, path).exists()) for path in paths):
                return True
            time.sleep(0.2)  # the indexer's batch: the catalog says when it is done
        return False
    finally:
        catalog.close()


def _indexed(catalog: Catalog, path: str, present: bool) -> bool:
    record = catalog.get_note(path)
    return record is not None if present else record is None


def set_paused(settings: Settings, connector_id: str, paused: bool) -> None:
    registry = Registry(settings)
    config = registry.get(connector_id)
    if config is None:
        raise KeyError(connector_id)
    registry.save(config.model_copy(update={"paused": paused}))
    registry.set_status(registry.status(connector_id).model_copy(update={"state": "paused" if paused else "never"}))


def remove_connector(settings: Settings, connector_id: str) -> int:
    """Forget a connector with its data; its items leave the index (now, or at the next start's reconcile)."""
    paths = Registry(settings).remove(connector_id)
    client = SystemClient(settings)
    if paths and client.running():
        client.queues.enqueue_paths(paths, settings.index_batch_notes, EVENT_PRIORITY)
        wait_items_indexed(settings, paths, SYNC_WAIT_SECONDS)
    return len(paths)
