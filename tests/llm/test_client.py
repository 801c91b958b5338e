"""The one generation client's parts that need no worker: ``collect``, ``CancelScope`` over a plain stream
function (``StreamGenerator``), and the learner's pacing decorator. The scope against the real worker and
Redis is tested in tests/llm/test_generation_worker_loop.py."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from services.config import Settings
from services.learner.pacing import LearnerModel, LearnerStopped
from services.llm.client import CancelScope, StreamGenerator, collect
from services.llm.models import ChatMessage, GenerationError, GenerationRequest, Priority, StreamEvent

REQUEST = GenerationRequest(messages=[ChatMessage(role="user", content="Bonjour ?")], max_tokens=8)
DONE = StreamEvent(kind="done", finish_reason="stop", prompt_tokens=5, completion_tokens=2, ttft_ms=12.5)


def test_collect_joins_the_tokens_and_keeps_the_stats_of_the_end() -> None:
    events = [StreamEvent(kind="progress", prompt_done=3, prompt_tokens=5), StreamEvent(kind="token", text="Bon")]
    result = collect([*events, StreamEvent(kind="token", text="jour"), DONE])
    assert result.text == "Bonjour" and result.finish_reason == "stop"
    assert (result.prompt_tokens, result.completion_tokens, result.ttft_ms) == (5, 2, 12.5)


def test_collect_raises_on_an_error_event_and_on_a_stream_without_its_end() -> None:
    with pytest.raises(GenerationError, match="le modèle a planté"):
        collect([StreamEvent(kind="token", text="Bon"), StreamEvent(kind="error", error="le modèle a planté")])
    with pytest.raises(GenerationError, match="without a terminal event"):
        collect([StreamEvent(kind="token", text="Bon")])


class Endless:
    """A stream function that writes tokens until it is closed, remembering what it was asked."""

    def __init__(self) -> None:
        self.requests: list[GenerationRequest] = []
        self.closed = False

    def __call__(self, request: GenerationRequest) -> Iterator[StreamEvent]:
        self.requests.append(request)
        try:
            while True:
                yield StreamEvent(kind="token", text="mot ")
        finally:
            self.closed = True


def test_a_stopped_scope_submits_nothing() -> None:
    source = Endless()
    scope = CancelScope()
    scope.stop()
    result = StreamGenerator(source).text(REQUEST, scope=scope)
    assert result.text == "" and result.finish_reason == "cancelled"
    assert source.requests == [] and scope.in_flight == []


def test_stopping_a_scope_ends_its_streams_in_flight_at_the_next_token() -> None:
    source = Endless()
    scope = CancelScope()
    events = StreamGenerator(source).stream(REQUEST, scope=scope)
    assert next(events).text == "mot " and scope.in_flight == [REQUEST.id]
    scope.stop()
    assert [(e.kind, e.finish_reason) for e in events] == [("done", "cancelled")]
    assert source.closed and scope.in_flight == []
    assert StreamGenerator(source).text(REQUEST, scope=scope).finish_reason == "cancelled"  # and starts nothing
    assert len(source.requests) == 1


def test_a_scope_keeps_the_models_own_time_to_first_token() -> None:
    scope = CancelScope()
    generator = StreamGenerator(lambda request: iter([StreamEvent(kind="token", text="Oui"), DONE]))
    assert generator.text(REQUEST, scope=scope).text == "Oui" and scope.model_ttft_ms == 12.5


def test_the_learners_model_asks_at_learner_priority_pausing_between_calls() -> None:
    asked: list[GenerationRequest] = []

    def reply(request: GenerationRequest) -> Iterator[StreamEvent]:
        asked.append(request)
        yield from [StreamEvent(kind="token", text=" Une idée. "), DONE]

    stop = threading.Event()
    model = LearnerModel(Settings(_env_file=None, learn_pause_seconds=0.0), StreamGenerator(reply), stop)
    assert model.ask("Tu es un lecteur.", "La note") == "Une idée."
    assert model.text(REQUEST).text == " Une idée. " and model.state() is None
    assert [r.priority for r in asked] == [Priority.LEARNER, Priority.LEARNER]  # whatever the caller asked for
    assert (model.meter.calls, model.meter.prompt_tokens, model.meter.completion_tokens) == (2, 10, 4)
    stop.set()
    with pytest.raises(LearnerStopped):
        model.ask("Tu es un lecteur.", "La note")
    assert len(asked) == 2
