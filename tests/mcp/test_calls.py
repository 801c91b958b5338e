"""Each MCP call's record in the task history: arguments clipped, empty ones dropped, a down Redis harmless."""

from __future__ import annotations

import time

import redis

from services.mcp.calls import ARG_CHARS, CallLog
from services.system.history import TaskHistory


def test_a_call_is_recorded_with_its_arguments_duration_and_outcome(redis_url: str) -> None:
    history = TaskHistory(redis.Redis.from_url(redis_url))
    log = CallLog(history)
    log.record("search", {"query": "é" * 500, "tags": [], "k": 8, "since": None}, time.perf_counter(), None)
    log.record("read_note", {"path": "../x.md"}, time.perf_counter(), ValueError("refused\nsecond line"))
    log.close()  # the writer thread stores what was queued
    failed, searched = history.recent(2)
    assert (failed.queue, failed.name, failed.status, failed.error) == ("mcp", "read_note", "error", "refused")
    assert searched.status == "complete" and searched.duration_ms is not None and searched.duration_ms >= 0
    assert set(searched.kwargs) == {"query", "k"} and len(searched.kwargs["query"]) == ARG_CHARS
    assert searched.summary.startswith("query=éé")


def test_a_redis_that_is_down_loses_the_record_not_the_call(tmp_path) -> None:
    down = TaskHistory(redis.Redis.from_url(f"unix://{tmp_path}/none.sock"))
    log = CallLog(down)
    log.record("search", {"query": "x"}, time.perf_counter(), None)  # no exception
    log.close()


def test_calls_queued_at_once_are_stored_in_order_and_none_lost(redis_url: str) -> None:
    history = TaskHistory(redis.Redis.from_url(redis_url))
    log = CallLog(history)
    for n in range(50):
        log.record("read_note", {"path": f"{n}.md"}, time.perf_counter(), None)
    log.close()
    assert [r.kwargs["path"] for r in history.recent(50)] == [f"{n}.md" for n in reversed(range(50))]
