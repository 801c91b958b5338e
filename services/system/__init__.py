"""The one face of the running system: its queues and tasks, the handlers each process binds, the client
every caller uses, the chat engine's factory, the processes' heartbeats and the task history.

Workers build (their handlers, then a consumer), services do, web renders: nothing outside ``workers/``
imports ``workers``.
"""

from services.system.chat_engine import build_chat_engine
from services.system.running import SystemClient, SystemNotRunning, SystemStatus

__all__ = ["SystemClient", "SystemNotRunning", "SystemStatus", "build_chat_engine"]
