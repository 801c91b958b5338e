"""What Redis keeps between starts: no task value that nobody reads, and an append-only file that a start
does not replay command by command for seconds (at 50,000 notes: 146,000 unread values, a 155 MB file and
1.6 s of every start, #34)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from services.config import Settings
from services.system.queues import Queues
from tests.support.system import wait_until
from workers import redis_server
from workers.redis_server import RedisProcess, compact_append_only_file, start_private_redis


class Indexer:
    """The indexer's two kinds of task: a sync's report, which nobody reads, and a search's answer."""

    kind = "indexer"

    def sync_batch(self, paths: list[str]) -> dict[str, Any]:
        return {"indexed": paths}

    def search(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"hits": [request["query"]]}


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[tuple[Settings, RedisProcess]]:
    """A Redis of this test's own: the queues' keys are the same in every test."""
    settings = Settings(vault=tmp_path, data_dir=tmp_path / "data")
    server = start_private_redis(settings)
    yield settings.model_copy(update={"redis_url": server.url}), server
    server.stop()


def test_a_sync_report_is_not_kept_but_a_search_answer_is(own_redis: tuple[Settings, RedisProcess]) -> None:
    queues = Queues(own_redis[0])
    queues.serve(Indexer())
    queues.sync_batch(["Note.md"])
    queues.index.execute(queues.index.dequeue())
    pending = queues.run_search({"query": "chat"})
    queues.search.execute(queues.search.dequeue())

    assert queues.index.result_count() == 0  # kept forever before: nothing reads or deletes it
    assert pending.get(blocking=True, timeout=30) == {"hits": ["chat"]}


def test_the_values_an_earlier_version_kept_are_dropped(own_redis: tuple[Settings, RedisProcess]) -> None:
    queues = Queues(own_redis[0])
    queues.hueys["enrich"].storage.put_data("old-task", b"report")
    queues.index.storage.put_data("older-task", b"report")
    queues.search.storage.put_data("awaited-task", b"answer")  # a search's answer still awaited

    assert queues.drop_unread_results() == 2
    assert queues.hueys["enrich"].result_count() == queues.index.result_count() == 0
    assert queues.search.result_count() == 1


def test_an_append_only_file_grown_past_the_threshold_is_rewritten(
    own_redis: tuple[Settings, RedisProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, server = own_redis
    monkeypatch.setattr(redis_server, "COMPACT_ABOVE_BYTES", 256 * 1024)
    client = redis.Redis.from_url(server.url)
    client.set("kept", "value")
    with client.pipeline(transaction=False) as pipe:  # a run's churn: written, then deleted
        for n in range(2_000):
            pipe.set(f"task:{n}", "x" * 200).delete(f"task:{n}")
        pipe.execute()
    aof = settings.redis_dir / "appendonly.aof"
    assert compact_append_only_file(client)
    wait_until(lambda: not rewriting(client), "the rewrite done")

    assert aof.stat().st_size < 64 * 1024  # the data as it is, not the 4,000 commands
    assert not compact_append_only_file(client)  # small now: left alone
    server.stop()
    again = start_private_redis(settings)  # the rewritten file loads
    try:
        assert redis.Redis.from_url(again.url).get("kept") == b"value"
    finally:
        again.stop()


def rewriting(client: redis.Redis) -> bool:
    persistence = client.info("persistence")
    return bool(persistence["aof_rewrite_in_progress"] or persistence["aof_rewrite_scheduled"])
