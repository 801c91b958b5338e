"""The OpenAI-compatible backend against a small local server that speaks ``/v1/chat/completions`` SSE."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from services.config import Settings
from services.llm.models import ChatMessage, GenerationError, GenerationRequest
from services.llm.openai_backend import OpenAIBackend, OpenAIServerError, sse_chunks
from services.system.generation_client import GenerationClient
from tests.support.generation import running_worker, worker_settings
from tests.support.scripted_openai import (
    content_chunk,
    finish_chunk,
    scripted_server,
    send_done,
    send_error,
    send_event,
    serving,
    start_sse,
    usage_chunk,
)
from workers.mlx_worker import worker_limits

ANSWER = ["The", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog."]
MESSAGES = [ChatMessage(role="system", content="Be brief."), ChatMessage(role="user", content="Say the pangram.")]


class FakeOpenAI(ThreadingHTTPServer):
    """Streams ``ANSWER`` one word per chunk, or answers 500 when the last message says ``explode``."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.include_usage = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that stops reading early (a stop string, a cancel) closes the connection mid-stream


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if self.path != "/v1/chat/completions" or body["messages"][-1]["content"] == "explode":
            send_error(self, "model exploded")
            return
        start_sse(self)
        words = ANSWER[: body["max_tokens"]]
        send_event(self, {"choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]})
        self.wfile.write(b": keep-alive\n\n")
        for word in words:
            send_event(self, content_chunk(word))
        send_event(self, finish_chunk("stop" if len(words) == len(ANSWER) else "length"))
        if self.server.include_usage and body.get("stream_options", {}).get("include_usage"):
            send_event(self, usage_chunk(21, len(words)))
        send_done(self)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeOpenAI]:
    with serving(FakeOpenAI()) as server:
        yield server


@pytest.fixture(scope="module")
def openai_worker(
    redis_url: str, fake_server: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Settings, Any]]:
    settings = worker_settings(
        redis_url,
        tmp_path_factory.mktemp("openai"),
        llm_backend="openai",
        llm_base_url=fake_server.base_url,
        llm_model="echo",
        llm_api_key="secret",
        llm_can_write="yes",  # no probes at start: the tests count what reaches the server
    )
    with running_worker(settings, limits=worker_limits(settings)) as service:
        yield settings, service


def test_backend_streams_pieces_with_usage(fake_server: FakeOpenAI) -> None:
    backend = OpenAIBackend(fake_server.base_url, "echo", api_key="secret")
    text = backend.stream(MESSAGES, max_tokens=50, temperature=0.0)
    assert list(text) == ANSWER
    assert (text.counts.prompt_tokens, text.counts.completion_tokens, text.counts.finish_reason) == (21, 9, "stop")
    sent = fake_server.requests[-1]
    assert sent["path"] == "/v1/chat/completions" and sent["auth"] == "Bearer secret"
    assert sent["body"]["stream"] is True and sent["body"]["model"] == "echo" and sent["body"]["max_tokens"] == 50
    assert sent["body"]["messages"][1] == {"role": "user", "content": "Say the pangram."}
    backend.unload()


def test_backend_cuts_at_stop_strings_and_counts_chunks_without_usage(fake_server: FakeOpenAI) -> None:
    fake_server.include_usage = False
    try:
        backend = OpenAIBackend(fake_server.base_url, "echo")
        # "k bro" spans two chunks: " quick" is held back to " quic" until " brown" settles it.
        text = backend.stream(MESSAGES, max_tokens=50, temperature=0.0, stop=["k bro", "dog"])
        assert list(text) == ["The", " quic"]
        assert text.counts.finish_reason == "stop" and text.counts.completion_tokens == 3
        assert fake_server.requests[-1]["body"]["stop"] == ["k bro", "dog"]
        backend.unload()
    finally:
        fake_server.include_usage = True


def test_sse_error_payload_raises() -> None:
    lines = iter(['data: {"choices": []}', "", 'data: {"error": {"message": "overloaded"}}'])
    with pytest.raises(OpenAIServerError, match="overloaded"):
        list(sse_chunks(lines))


def test_worker_streams_from_the_server_through_queue_and_redis(openai_worker: tuple[Settings, Any]) -> None:
    settings, _service = openai_worker
    client = GenerationClient(settings)
    request_id = client.submit(GenerationRequest(messages=MESSAGES, max_tokens=5))
    events = list(client.events(request_id, timeout=30))
    assert [e.text for e in events[:-1]] == ANSWER[:5]
    done = events[-1]
    assert done.kind == "done" and done.finish_reason == "length" and done.completion_tokens == 5
    assert (done.backend, done.model, done.prompt_tokens) == ("openai", "echo", 21)

    result = client.text(GenerationRequest(messages=MESSAGES, max_tokens=50), timeout=30)
    assert result.text == "".join(ANSWER) and result.finish_reason == "stop"


def test_server_error_ends_the_stream_with_an_error(openai_worker: tuple[Settings, Any]) -> None:
    settings, _service = openai_worker
    failing = [ChatMessage(role="user", content="explode")]
    with pytest.raises(GenerationError, match="500"):
        GenerationClient(settings).text(GenerationRequest(messages=failing, max_tokens=5), timeout=30)


def test_idle_worker_unloads_and_reloads_on_the_next_request(openai_worker: tuple[Settings, Any]) -> None:
    settings, service = openai_worker
    client = GenerationClient(settings)
    client.text(GenerationRequest(messages=MESSAGES, max_tokens=2), timeout=30)
    assert service.backend.loaded
    assert not service.unload_if_idle(now=time.monotonic())  # just used
    later = time.monotonic() + settings.llm_idle_unload_seconds + 1
    deadline = time.monotonic() + 10
    while not service.unload_if_idle(now=later):  # true once the worker thread has left the request
        assert time.monotonic() < deadline, "the idle worker never unloaded"
        time.sleep(0.01)  # polling an observable condition
    assert not service.backend.loaded and not service.state().loaded
    assert client.text(GenerationRequest(messages=MESSAGES, max_tokens=2), timeout=30).text == "The quick"
    assert service.backend.loaded


def test_under_auto_the_worker_asks_its_model_the_probes_and_publishes_that_it_writes(
    redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A model that answers in French citing [1], picks [2] and refuses writes; a restart asks nothing."""
    from services.llm.capability import CACHE_KEY
    from tests.support.system import wait_until

    with scripted_server() as server:
        server.script(
            "Le potager est arrosé chaque mardi et chaque vendredi [1].",
            "L'atelier de taille est animé par Sophie [2].",
            "Les extraits ne disent pas combien coûte l'adhésion.",
        )
        server_settings = {"llm_backend": "openai", "llm_base_url": server.base_url, "llm_model": "probed"}
        own = f"{redis_url}?db=3"  # beside the module's worker, whose heartbeat is the shared Redis's mlx_worker
        settings = worker_settings(own, tmp_path_factory.mktemp("probes"), llm_warm_up=False, **server_settings)
        client = GenerationClient(settings)
        client.redis.delete(CACHE_KEY.format(backend="openai", model="probed"))
        for _start in range(2):
            with running_worker(settings, limits=worker_limits(settings)):
                state = wait_until(lambda: (s := client.state()) and s.capability and s.capability.can_write and s, "")
            assert (state.capability.reason, state.capability.passed, state.capability.probes) == ("check", 3, 3)
        assert len(server.requests) == 3  # the second start read the verdict kept in Redis
        assert all(r["temperature"] == 0.0 and r["max_tokens"] == 80 for r in server.requests)
