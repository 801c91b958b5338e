"""Task history, retry and queue contents against a real Redis and real Huey queues."""

from __future__ import annotations

import uuid

import pytest
import redis
from huey import PriorityRedisHuey
from huey.signals import SIGNAL_COMPLETE, SIGNAL_ERROR

from services.system.history import TaskHistory, TaskRecord, describe_args, outcome_recorder, queue_state, retry


@pytest.fixture
def huey(redis_url: str) -> PriorityRedisHuey:
    queue = PriorityRedisHuey(f"test-{uuid.uuid4().hex[:8]}", url=redis_url, utc=True, store_intermediate_errors=False)
    yield queue
    queue.flush()


@pytest.fixture
def history(huey: PriorityRedisHuey) -> TaskHistory:
    client: redis.Redis = huey.storage.conn
    client.delete("obsirag:tasks:history", "obsirag:tasks:retried")
    return TaskHistory(client)


def test_outcomes_are_recorded_and_a_final_failure_can_be_retried(
    huey: PriorityRedisHuey, history: TaskHistory
) -> None:
    broken = {"note.md"}
    done: list[list[str]] = []

    @huey.task(name="sync_note", retries=1)
    def sync_note(paths: list[str]) -> int:
        if broken & set(paths):
            raise OSError("disk on fire")
        done.append(paths)
        return len(paths)

    huey.signal(SIGNAL_COMPLETE, SIGNAL_ERROR)(outcome_recorder(history, "index"))
    sync_note(["note.md"])
    huey.execute(huey.dequeue())  # first attempt fails, one retry left (no delay: back in the queue)
    huey.execute(huey.dequeue())  # final failure

    recent = history.recent()
    assert [r.status for r in recent] == ["error", "retrying"]
    failure = recent[0]
    assert failure.name == "sync_note" and failure.error == "OSError: disk on fire" and failure.args == [["note.md"]]

    broken.clear()
    again = retry(history, failure.id, {"sync_note": sync_note})
    assert again.id == failure.id and history.recent()[0].retried
    with pytest.raises(KeyError):  # once only
        retry(history, failure.id, {"sync_note": sync_note})
    huey.execute(huey.dequeue())
    assert done == [["note.md"]] and history.recent()[0].status == "complete"


def test_queue_state_lists_pending_and_scheduled_tasks(huey: PriorityRedisHuey) -> None:
    @huey.task(name="sync_batch")
    def sync_batch(paths: list[str]) -> None:
        pass

    sync_batch([f"n{i}.md" for i in range(5)])
    huey.add_schedule(sync_batch.s(["later.md"], delay=3600))  # where a retry with a delay waits
    state = queue_state("index", huey)
    assert (state.pending, state.scheduled) == (1, 1)
    assert state.pending_tasks[0].name == "sync_batch" and state.pending_tasks[0].summary == "n0.md, n1.md, n2.md (+2)"
    assert state.scheduled_tasks[0].summary == "later.md" and state.scheduled_tasks[0].eta is not None


def test_history_is_capped(history: TaskHistory) -> None:
    small = TaskHistory(history.client, limit=3)
    for i in range(5):
        small.record(TaskRecord(id=str(i), queue="index", name="sync_batch", status="complete", at=float(i)))
    assert [r.id for r in small.recent()] == ["4", "3", "2"]
    assert describe_args([]) == ""
