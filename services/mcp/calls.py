"""Every MCP tool call in the task history (queue ``mcp``): tool, arguments, duration, outcome.

Arguments are what the client sent (queries, paths, filters: never a note's content), clipped; the
dashboard lists them with the queues' tasks. A call never waits on Redis: records queue up in memory and
one writer thread stores them in batches (one pipeline each, a quarter of a second after the first one of a
burst); ``close`` writes what is left.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from typing import Any

import redis

from services.system.history import TaskHistory, TaskRecord

log = logging.getLogger(__name__)
QUEUE = "mcp"
ARG_CHARS = 120
BATCH_S = 0.25  # the writer gathers a burst's records this long: one wake-up and one round trip for them all
CLOSE_TIMEOUT = 5.0  # seconds to write the last records at shutdown


class CallLog:
    def __init__(self, history: TaskHistory) -> None:
        self.history = history
        self._pending: queue.SimpleQueue[TaskRecord | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._lock = threading.Lock()

    def record(self, tool: str, arguments: dict[str, Any], started: float, error: BaseException | None) -> None:
        """Queue one call's record for the writer; a Redis that is down loses it, never the call's answer."""
        given = {name: _clip(value) for name, value in arguments.items() if value not in (None, "", [], {})}
        record = TaskRecord(
            id=uuid.uuid4().hex,
            queue=QUEUE,
            name=tool,
            args=[f"{k}={v}" for k, v in given.items()],
            kwargs=given,
            status="complete" if error is None else "error",
            error=None if error is None else str(error).splitlines()[0][:300],
            at=time.time(),
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        self._pending.put(record)
        self._start()

    def close(self) -> None:
        """Write the records still queued, then stop the writer."""
        with self._lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            self._pending.put(None)
            writer.join(CLOSE_TIMEOUT)

    def _start(self) -> None:
        if self._writer is None:
            with self._lock:
                if self._writer is None:
                    self._writer = threading.Thread(target=self._write, name="mcp-call-log", daemon=True)
                    self._writer.start()

    def _write(self) -> None:
        while (first := self._pending.get()) is not None:
            time.sleep(BATCH_S)  # not to wake (and take the interpreter's lock) once per call
            batch, done = [first], False
            while not done and not self._pending.empty():  # what queued meanwhile goes in the same pipeline
                record = self._pending.get()
                done = record is None
                batch.extend([record] if record is not None else [])
            self._store(batch)
            if done:
                return

    def _store(self, batch: list[TaskRecord]) -> None:
        try:
            self.history.record_many(batch)
        except (redis.RedisError, OSError) as exc:
            log.debug("%d MCP calls not recorded: %s", len(batch), exc)


def _clip(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= ARG_CHARS else value[: ARG_CHARS - 1] + "…"
    if isinstance(value, list | tuple):
        return [_clip(v) for v in value]
    return value if isinstance(value, int | float | bool) else _clip(str(value))
