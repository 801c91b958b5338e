"""The real mlx worker loop (Huey consumer, Redis streams) on the bundled SmolLM2 model.

Generation runs at a few tokens per second on a shared CPU: requests stay short.
"""

from __future__ import annotations

import platform
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from services.config import BUNDLED_LLM_MODEL, Settings
from services.llm import streams
from services.llm.client import CancelScope
from services.llm.mlx_backend import MLXBackend
from services.llm.models import ChatMessage, GenerationRequest, Priority, StreamEvent
from services.llm.serving import READ_MARGIN
from services.system.generation_client import GenerationClient
from tests.support.generation import running_worker, worker_settings

QUESTION = [
    ChatMessage(role="system", content="Answer in one sentence."),
    ChatMessage(role="user", content="What is the capital of France?"),
]
STORY = [
    ChatMessage(role="system", content="Be brief."),
    ChatMessage(role="user", content="Write a long story about a cat."),
]
# About 1,500 prompt tokens: many seconds of prompt reading on a CPU, read in pieces of ~0.5 s.
LONG = [
    ChatMessage(role="system", content="Be brief."),
    ChatMessage(role="user", content="Summarise: " + "The cat walks on the roofs of Paris at night. " * 150),
]


@pytest.fixture(scope="module")
def worker(redis_url: str, model_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    settings = worker_settings(redis_url, tmp_path_factory.mktemp("generation"))
    backend = MLXBackend(BUNDLED_LLM_MODEL, model_cache)
    with running_worker(settings, backend):
        yield settings


@pytest.fixture
def client(worker: Settings) -> GenerationClient:
    return GenerationClient(worker)


def eventually(predicate: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)  # polling an observable condition (the heartbeat), not synchronising on time
    return value


def text_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if e.kind == "token")


def entry_ids(client: GenerationClient, request_id: str) -> list[tuple[int, int]]:
    """Redis stream entry ids (server milliseconds, sequence): when each event was written."""
    entries = client.redis.xrange(streams.stream_key(request_id))
    return [tuple(int(part) for part in entry_id.decode().split("-")) for entry_id, _ in entries]  # type: ignore[misc]


def test_the_worker_loads_its_model_and_measures_its_reading_rate_before_any_request(client: GenerationClient) -> None:
    state = eventually(lambda: (s := client.state()) and s.prompt_rate_measured and s, "warm-up", timeout=120)
    assert state.loaded and state.requests_served == 0 and state.prompt_tokens_per_s > 0
    if sys.platform == "linux" and platform.machine() == "x86_64":  # the mkl wheel is a dependency there
        assert state.blas and "mkl_rt" in state.blas
    assert state.tokenizer_path and state.prompt_budget >= 384


def test_answers_deterministically_and_serves_two_chats_one_after_the_other(client: GenerationClient) -> None:
    first = client.submit(GenerationRequest(messages=QUESTION, max_tokens=12))
    second = client.submit(GenerationRequest(messages=QUESTION, max_tokens=12))
    events_first, events_second = list(client.events(first)), list(client.events(second))

    assert "Paris" in text_of(events_first)
    assert text_of(events_first) == text_of(events_second)  # temperature 0 is greedy: same text
    done, done_second = events_first[-1], events_second[-1]
    assert done.kind == "done" and done.finish_reason == "stop"
    assert done.prompt_tokens > 10 and 0 < done.completion_tokens <= 12
    assert done.ttft_ms > 0 and done.tokens_per_s > 0
    assert (done.model, done.backend) == (BUNDLED_LLM_MODEL, "mlx")

    # One consumer thread: the second request started only once the first had finished.
    assert entry_ids(client, second)[0][0] >= entry_ids(client, first)[-1][0]
    assert done_second.queued_ms >= done.ttft_ms

    state = eventually(lambda: (s := client.state()) and s.requests_served >= 2 and s, "published state")
    assert state.loaded and state.backend == "mlx" and state.last_tokens_per_s > 0 and state.pid > 0


def test_chat_goes_before_ten_waiting_learners_and_cuts_into_a_running_one(client: GenerationClient) -> None:
    running = GenerationRequest(messages=STORY, max_tokens=20, priority=Priority.LEARNER)
    running_stream = client.events(client.submit(running))
    assert next(e for e in running_stream if e.kind != "progress").kind == "token"  # the learner is generating
    waiting = [GenerationRequest(messages=QUESTION, max_tokens=4, priority=Priority.LEARNER) for _ in range(10)]
    for request in waiting:
        client.submit(request)
    chat = GenerationRequest(messages=QUESTION, max_tokens=12)
    client.submit(chat)
    eventually(lambda: (s := client.state()) and s.queue_depth >= 10, "queue depth published")

    chat_events = list(client.events(chat.id))
    for request in waiting:  # they have not started: cancelled, they end without generating
        client.cancel(request.id)
    rest = list(running_stream)

    assert chat_events[-1].finish_reason == "stop" and "Paris" in text_of(chat_events)
    chat_done = entry_ids(client, chat.id)[-1]
    running_ids = entry_ids(client, running.id)
    assert running_ids[0] < chat_done < running_ids[-1]  # the chat ran between two learner tokens…
    assert rest[-1].kind == "done" and rest[-1].finish_reason == "length"  # …and the learner then finished
    assert rest[-1].completion_tokens == 20
    for request in waiting:
        events = list(client.events(request.id, timeout=60))
        assert [e.kind for e in events] == ["done"] and events[0].finish_reason == "cancelled"
        assert entry_ids(client, request.id)[0] > chat_done


def test_cancel_stops_between_two_tokens_and_state_shows_the_request(client: GenerationClient) -> None:
    request_id = client.submit(GenerationRequest(messages=STORY, max_tokens=200))
    events: list[StreamEvent] = []
    for event in client.events(request_id):
        events.append(event)
        if len(events) == 1:
            busy = eventually(lambda: (s := client.state()) and s.current_request == request_id and s, "busy state")
            assert busy.busy and busy.loaded
            client.cancel(request_id)
    done = events[-1]
    assert done.kind == "done" and done.finish_reason == "cancelled"
    assert done.completion_tokens < 30


def test_a_stopped_scope_submits_nothing_and_cancels_its_requests_in_flight(client: GenerationClient) -> None:
    scope = CancelScope()
    story = GenerationRequest(messages=STORY, max_tokens=200)
    events = client.stream(story, scope=scope)
    assert next(e for e in events if e.kind == "token").text and scope.in_flight == [story.id]
    scope.stop()
    done = list(events)[-1]
    assert done.kind == "done" and done.finish_reason == "cancelled" and done.completion_tokens < 30
    assert streams.is_cancelled(client.redis, story.id) and scope.in_flight == []
    assert scope.model_ttft_ms == done.ttft_ms and done.ttft_ms is not None  # the web's timing
    late = GenerationRequest(messages=QUESTION, max_tokens=12)
    assert client.text(late, scope=scope).finish_reason == "cancelled"  # once stopped, nothing more is asked
    assert "Paris" in client.text(GenerationRequest(messages=QUESTION, max_tokens=12)).text  # the next one ran
    assert not client.redis.exists(streams.stream_key(late.id))  # the worker never saw it


def first_progress(events: Iterator[StreamEvent]) -> StreamEvent:
    """Read until the worker says it has read part of the prompt."""
    return next(e for e in events if e.kind == "progress" and e.prompt_done > 0)


def test_cancel_during_prompt_reading_frees_the_worker_within_two_seconds(client: GenerationClient) -> None:
    request_id = client.submit(GenerationRequest(messages=LONG, max_tokens=8), watched=True)
    events = client.events(request_id)
    progress = first_progress(events)
    assert 0 < progress.fraction < 1 and progress.prompt_tokens > 1000
    cancelled_at = time.monotonic()
    client.cancel(request_id)
    rest = list(events)
    assert rest[-1].kind == "done" and rest[-1].finish_reason == "cancelled"
    assert time.monotonic() - cancelled_at < 2.0
    assert not any(e.kind == "token" for e in rest)  # it never got to its first token

    events_next = list(client.events(client.submit(GenerationRequest(messages=QUESTION, max_tokens=12))))
    assert "Paris" in text_of(events_next)  # the next request ran


def test_a_caller_that_stops_reading_frees_the_worker_and_its_rate_is_published(client: GenerationClient) -> None:
    request_id = client.submit(GenerationRequest(messages=LONG, max_tokens=8), watched=True)
    events = client.events(request_id)
    first_progress(events)
    events.close()  # the caller is killed: its heartbeat stops being refreshed
    gone_at = time.monotonic()
    ends = eventually(lambda: [e for _, e in streams.read(client.redis, request_id, "0", None) if e.terminal], "end")
    assert ends[0].finish_reason == "cancelled"
    assert time.monotonic() - gone_at < 2.5  # the heartbeat's 1.2 s expiry, then at most one piece of reading

    # A whole long prompt read: the worker publishes its measured rate and the budget it allows.
    done = list(client.events(client.submit(GenerationRequest(messages=LONG, max_tokens=2), watched=True)))[-1]
    state = eventually(lambda: (s := client.state()) and s.prompt_rate_measured and s, "measured rate")
    assert done.prompt_tokens > 1000 and state.prompt_tokens_per_s > 0
    within_target = int(10 * state.prompt_tokens_per_s * READ_MARGIN)
    assert state.prompt_budget == min(4096 - state.answer_tokens, max(384, within_target))


def test_a_follow_up_reuses_the_prompt_cache_of_the_exchange_before_it(client: GenerationClient) -> None:
    medium = [LONG[0], ChatMessage(role="user", content=LONG[1].content[:400])]  # ~100 tokens
    first = list(client.events(client.submit(GenerationRequest(messages=medium, max_tokens=6))))
    follow_up = [*medium, ChatMessage(role="assistant", content=text_of(first)), QUESTION[1]]
    done = list(client.events(client.submit(GenerationRequest(messages=follow_up, max_tokens=4))))[-1]
    assert done.kind == "done" and done.prompt_tokens > done.cached_tokens >= 32  # the first prompt, not re-read


def test_a_caller_timeout_during_prompt_reading_says_what_to_change_and_frees_the_worker(
    client: GenerationClient,
) -> None:
    list(client.events(client.submit(GenerationRequest(messages=QUESTION, max_tokens=1))))  # the model is loaded
    request_id = client.submit(GenerationRequest(messages=LONG, max_tokens=8), watched=True)
    events = list(client.events(request_id, timeout=1.0))  # far less than reading 1,500 tokens takes here
    gave_up_at = time.monotonic()
    error = events[-1]
    assert error.kind == "error" and "OBSIRAG_LLM_TIMEOUT_SECONDS" in error.error and "modèle" in error.error
    ends = eventually(lambda: [e for _, e in streams.read(client.redis, request_id, "0", None) if e.terminal], "end")
    assert ends[0].kind == "done" and ends[0].finish_reason == "cancelled"
    assert time.monotonic() - gave_up_at < 2.0
