"""The system's processes by name, and their heartbeats in Redis: each says it is alive; status readers list them."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import redis
from pydantic import BaseModel

HEARTBEAT_KEY = "obsirag:process:{name}"
# The supervisor's children in start order (``python -m workers.<name>``); they stop in reverse order so
# that producers go quiet before consumers.
WORKERS = ("indexer", "watcher", "mlx_worker", "ner", "learner", "extractor", "web")
PROCESSES = ("supervisor", *WORKERS)
FRENCH_NAMES = {  # as the dashboard and the French CLI name them
    "supervisor": "superviseur",
    "indexer": "indexation",
    "watcher": "surveillance du coffre",
    "mlx_worker": "génération (modèle)",
    "ner": "entités nommées",
    "learner": "apprentissage",
    "extractor": "extracteur de documents",
    "web": "interface web",
}


class ProcessState(BaseModel):
    name: str
    pid: int
    started_at: float
    heartbeat_at: float
    alive: bool
    details: dict[str, Any] = {}

    @property
    def uptime(self) -> float:
        return self.heartbeat_at - self.started_at


def publish_heartbeat(
    client: redis.Redis, name: str, started_at: float, interval: float, details: dict[str, Any] | None = None
) -> None:
    """Record that ``name`` is alive; the key expires when the process stops beating."""
    state = {"pid": os.getpid(), "started_at": started_at, "heartbeat_at": time.time(), "details": details or {}}
    client.set(HEARTBEAT_KEY.format(name=name), json.dumps(state), ex=max(1, int(interval * 3)))


def clear_heartbeat(client: redis.Redis, name: str) -> None:
    client.delete(HEARTBEAT_KEY.format(name=name))


def read_process(client: redis.Redis, name: str) -> ProcessState | None:
    raw = client.get(HEARTBEAT_KEY.format(name=name))
    if raw is None:
        return None
    state = json.loads(raw)
    return ProcessState(name=name, alive=True, **state)


def read_processes(client: redis.Redis, expected: list[str]) -> list[ProcessState]:
    """Every expected process, the silent ones reported dead."""
    states = []
    for name in expected:
        state = read_process(client, name)
        states.append(state or ProcessState(name=name, pid=0, started_at=0, heartbeat_at=0, alive=False))
    return states
