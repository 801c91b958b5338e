"""A local OpenAI-compatible server that answers each chat completion with the next scripted reply.

It stands in for a model whose output the test decides (well-formed or broken JSON), and keeps every
request it received so a test can look for what must never leave the machine.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

DEFAULT_REPLY = '{"facts": []}'
FAIL = object()  # script this to answer 500


class Forever:
    """Script this to stream ``prefix``, then ``line`` again and again until the client hangs up (a model
    stuck in a loop); ``{n}`` in the line becomes its count, for an answer that goes on without repeating."""

    def __init__(self, line: str, prefix: str = "") -> None:
        self.line, self.prefix = line, prefix
        self.sent = 0  # times the line went out before the client hung up


S = TypeVar("S", bound=ThreadingHTTPServer)


class ScriptedOpenAI(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.replies: list[object] = []
        self.requests: list[dict[str, Any]] = []
        self.models = ["scripted-chat"]  # what GET /v1/models lists
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def script(self, *replies: object) -> None:
        with self.lock:
            self.replies = list(replies)
            self.requests.clear()

    def next_reply(self) -> object:
        with self.lock:
            return self.replies.pop(0) if self.replies else DEFAULT_REPLY

    def sent_text(self) -> str:
        """Everything every request sent, as one string."""
        return "\n".join(json.dumps(r, ensure_ascii=False) for r in self.requests)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class _Handler(BaseHTTPRequestHandler):
    server: ScriptedOpenAI

    def do_GET(self) -> None:
        if self.path != "/v1/models":
            self.send_error(404)
            return
        body = json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in self.server.models]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body.encode())))
        self.end_headers()
        self.wfile.write(body.encode())

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.requests.append(body)
        reply = self.server.next_reply()
        if reply is FAIL:
            send_error(self, "scripted failure")
            return
        if isinstance(reply, Forever):
            stream_forever(self, reply)
            return
        text = str(reply)
        start_sse(self)
        pieces = [text[i : i + 16] for i in range(0, len(text), 16)] or [""]
        for piece in pieces:
            send_event(self, content_chunk(piece))
        send_event(self, finish_chunk("stop"))
        prompt = sum(len(m["content"]) for m in body["messages"]) // 4
        send_event(self, usage_chunk(prompt, len(pieces)))
        send_done(self)

    def log_message(self, format: str, *args: Any) -> None:
        pass


# --- the SSE of ``/v1/chat/completions``, shared with test_openai_backend's FakeOpenAI ------------------


def start_sse(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.end_headers()


def send_event(handler: BaseHTTPRequestHandler, payload: dict[str, Any]) -> None:
    handler.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
    handler.wfile.flush()


def send_done(handler: BaseHTTPRequestHandler) -> None:
    handler.wfile.write(b"data: [DONE]\n\n")


def send_error(handler: BaseHTTPRequestHandler, message: str, status: int = 500) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.end_headers()
    handler.wfile.write(json.dumps({"error": {"message": message}}).encode())


def content_chunk(text: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}


def finish_chunk(reason: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


def usage_chunk(prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    return {"choices": [], "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}}


def stream_forever(handler: BaseHTTPRequestHandler, reply: Forever) -> None:
    start_sse(handler)
    try:
        if reply.prefix:
            send_event(handler, content_chunk(reply.prefix))
        while reply.sent < 10_000:  # a bound all the same: a client that never hangs up fails its test
            send_event(handler, content_chunk(reply.line.replace("{n}", str(reply.sent))))
            reply.sent += 1
    except OSError:  # the client hung up: what a worker that stops a loop does
        return


@contextmanager
def serving(server: S) -> Iterator[S]:
    """``server`` answering in a thread until the block ends."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def scripted_server() -> AbstractContextManager[ScriptedOpenAI]:
    return serving(ScriptedOpenAI())
