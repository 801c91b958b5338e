"""The one face of the running system: its queues and tasks, the handlers each process binds, the client
every caller uses, the chat engine's factory, the processes' heartbeats and the task history.

Workers build (their handlers, then a consumer), services do, web renders: nothing outside ``workers/``
imports ``workers``. The public names load on first use, so that a worker importing only
``services.system.queues`` does not import the client's dependencies (the store, the chat engine).

May use every capability package below it; ``mcp``, ``web`` and ``workers`` use it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from services.system.chat_engine import build_chat_engine
    from services.system.client import SystemClient, SystemNotRunning, SystemStatus

__all__ = ["SystemClient", "SystemNotRunning", "SystemStatus", "build_chat_engine"]
_HOMES = {
    "SystemClient": "client",
    "SystemNotRunning": "client",
    "SystemStatus": "client",
    "build_chat_engine": "chat_engine",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"services.system.{_HOMES[name]}"), name)
