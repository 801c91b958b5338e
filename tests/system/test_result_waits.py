"""A task's result waited for longer than redis-py's own read timeout (5 s by default since redis-py 8).

At 50,000 notes the first search after a start took a few seconds; the client's wait, given
``search_timeout`` (10 s), failed at 5 s with « the indexer did not answer » (#34)."""

from __future__ import annotations

import threading
import time
import uuid

from services.system.queues import make_huey

SLOWER_THAN_REDIS_DEFAULT = 5.5  # seconds: past redis-py's 5 s socket timeout


def test_a_result_slower_than_redis_default_timeout_is_waited_for(redis_url: str) -> None:
    huey = make_huey(f"slow-{uuid.uuid4().hex[:8]}", redis_url)

    @huey.task()
    def answer() -> str:
        return "found"

    pending = answer()
    # The consumer takes the task only now: the waiting client sits in one blocking read meanwhile.
    runner = threading.Timer(SLOWER_THAN_REDIS_DEFAULT, lambda: huey.execute(huey.dequeue()))
    runner.start()
    began = time.monotonic()
    try:
        assert pending.get(blocking=True, timeout=30) == "found"
    finally:
        runner.join()
    assert time.monotonic() - began >= SLOWER_THAN_REDIS_DEFAULT - 0.5
