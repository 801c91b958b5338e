"""Task history for the dashboard (and ``obsirag``): what the queues ran, what failed and why, and retrying a failure.

The consumer process records each finished task through Huey signals (``outcome_recorder``) into a
capped Redis list; any process (the web app) reads it back with ``TaskHistory`` and re-enqueues a
failed task with the same arguments (``retry``). Queue contents come straight from Huey's storage.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from datetime import UTC
from typing import Any, Literal

import redis
from huey import Huey
from huey.signals import SIGNAL_COMPLETE
from pydantic import BaseModel, Field

HISTORY_KEY = "obsirag:tasks:history"
RETRIED_KEY = "obsirag:tasks:retried"
HISTORY_LIMIT = 200
ARG_PREVIEW = 3  # paths shown per task, the rest counted

TaskStatus = Literal["complete", "error", "retrying"]


class TaskRecord(BaseModel):
    """One finished attempt of a task (``retrying``: it failed and Huey will try again)."""

    id: str
    queue: str
    name: str
    args: list[Any] = Field(default_factory=list)
    kwargs: dict[str, Any] = Field(default_factory=dict)
    status: TaskStatus
    error: str | None = None
    at: float  # epoch seconds
    retried: bool = False
    duration_ms: float | None = None  # MCP tool calls (queue "mcp") carry how long they took

    @property
    def summary(self) -> str:
        return describe_args(self.args)


class QueuedTask(BaseModel):
    id: str
    name: str
    summary: str
    priority: int | None = None
    eta: float | None = None  # epoch seconds, scheduled tasks only


class QueueState(BaseModel):
    name: str
    pending: int
    scheduled: int
    pending_tasks: list[QueuedTask] = Field(default_factory=list)
    scheduled_tasks: list[QueuedTask] = Field(default_factory=list)


def describe_args(args: list[Any]) -> str:
    """``[["a.md", "b.md", …]]`` → ``a.md, b.md, c.md (+5)``: the paths a task is about."""
    flat: list[str] = []
    for arg in args:
        flat.extend(str(a) for a in arg) if isinstance(arg, list | tuple) else flat.append(str(arg))
    shown = ", ".join(flat[:ARG_PREVIEW])
    return shown + (f" (+{len(flat) - ARG_PREVIEW})" if len(flat) > ARG_PREVIEW else "")


class TaskHistory:
    """The capped list of recent task outcomes, newest first, in Redis."""

    def __init__(self, client: redis.Redis, limit: int = HISTORY_LIMIT) -> None:
        self.client = client
        self.limit = limit

    def record(self, record: TaskRecord) -> None:
        self.record_many([record])

    def record_many(self, records: list[TaskRecord]) -> None:
        """Store ``records`` (oldest first) in one round trip."""
        pipe = self.client.pipeline()
        pipe.lpush(HISTORY_KEY, *(r.model_dump_json() for r in records))
        pipe.ltrim(HISTORY_KEY, 0, self.limit - 1)
        pipe.execute()

    def recent(self, limit: int = 30) -> list[TaskRecord]:
        retried = {r.decode() for r in self.client.smembers(RETRIED_KEY)}
        records = [TaskRecord.model_validate_json(raw) for raw in self.client.lrange(HISTORY_KEY, 0, limit - 1)]
        return [r.model_copy(update={"retried": r.id in retried}) for r in records]

    def get(self, task_id: str) -> TaskRecord | None:
        return next((r for r in self.recent(self.limit) if r.id == task_id and r.status == "error"), None)

    def mark_retried(self, task_id: str) -> None:
        self.client.sadd(RETRIED_KEY, task_id)


def outcome_recorder(history: TaskHistory, queue: str) -> Callable[..., None]:
    """A Huey signal receiver (for ``SIGNAL_COMPLETE`` and ``SIGNAL_ERROR``) that fills ``history``."""

    def receive(signal: str, task: Any, exc: BaseException | None = None) -> None:
        if signal == SIGNAL_COMPLETE:
            status: TaskStatus = "complete"
        else:
            status = "retrying" if task.retries else "error"  # Huey signals every attempt; 0 left = final
        error = f"{type(exc).__name__}: {exc}" if exc is not None else None
        history.record(
            TaskRecord(
                id=task.id,
                queue=queue,
                name=task.name,
                args=_jsonable(list(task.args)),
                kwargs=_jsonable(dict(task.kwargs)),
                status=status,
                error=error,
                at=time.time(),
            )
        )

    return receive


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def retry(history: TaskHistory, task_id: str, tasks: Mapping[str, Callable[..., Any]]) -> TaskRecord:
    """Enqueue a failed task again with its arguments. ``tasks`` maps task names to Huey task handles.

    Raises ``KeyError`` for an unknown or non-failed task, or one already retried.
    """
    record = history.get(task_id)
    if record is None or record.retried or record.name not in tasks:
        raise KeyError(task_id)
    history.mark_retried(task_id)
    tasks[record.name](*record.args, **record.kwargs)
    return record


def queue_state(name: str, huey: Huey, limit: int = 10) -> QueueState:
    """Depths of one queue and its first pending and scheduled tasks.

    Messages are decoded without Huey's task registry, so a queue whose tasks this process never
    registered (the generate queue, seen from the web app) still lists them.
    """
    return QueueState(
        name=name,
        pending=huey.pending_count(),
        scheduled=huey.scheduled_count(),
        pending_tasks=[_queued(huey, raw) for raw in huey.storage.enqueued_items(limit)],
        scheduled_tasks=[_queued(huey, raw) for raw in huey.storage.scheduled_items(limit)],
    )


def task_name(message: Any) -> str:
    """A queued message's task name, without the module Huey prefixes it with."""
    return str(message.name).rsplit(".", 1)[-1]


def _queued(huey: Huey, raw: bytes) -> QueuedTask:
    message = huey.serializer.deserialize(raw)
    eta = message.eta
    if eta is not None and eta.tzinfo is None:  # huey(utc=True) stores naive UTC datetimes
        eta = eta.replace(tzinfo=UTC)
    return QueuedTask(
        id=message.id,
        name=task_name(message),
        summary=describe_args(list(message.args or ())),
        priority=message.priority,
        eta=eta.timestamp() if eta is not None else None,
    )
