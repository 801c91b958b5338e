"""Every MCP tool call in the task history (queue ``mcp``): tool, arguments, duration, outcome.

Arguments are what the client sent (queries, paths, filters: never a note's content), clipped; the
dashboard lists them with the queues' tasks.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

import redis

from services.system.history import TaskHistory, TaskRecord

log = logging.getLogger(__name__)
QUEUE = "mcp"
ARG_CHARS = 120


class CallLog:
    def __init__(self, history: TaskHistory) -> None:
        self.history = history

    def record(self, tool: str, arguments: dict[str, Any], started: float, error: BaseException | None) -> None:
        """Store one call; a Redis that is down loses the record, never the call's answer."""
        given = {name: _clip(value) for name, value in arguments.items() if value not in (None, "", [], {})}
        record = TaskRecord(
            id=uuid.uuid4().hex, queue=QUEUE, name=tool, args=[f"{k}={v}" for k, v in given.items()],
            kwargs=given, status="complete" if error is None else "error",
            error=None if error is None else str(error).splitlines()[0][:300], at=time.time(),
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
        )  # fmt: skip
        try:
            self.history.record(record)
        except (redis.RedisError, OSError) as exc:
            log.debug("MCP call %s not recorded: %s", tool, exc)


def _clip(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= ARG_CHARS else value[: ARG_CHARS - 1] + "…"
    if isinstance(value, list | tuple):
        return [_clip(v) for v in value]
    return value if isinstance(value, int | float | bool) else _clip(str(value))
