"""A local OpenAI-compatible server that answers each chat completion with the next scripted reply.

It stands in for a model whose output the test decides (well-formed or broken JSON), and keeps every
request it received so a test can look for what must never leave the machine.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_REPLY = '{"facts": []}'
FAIL = object()  # script this to answer 500


class ScriptedOpenAI(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.replies: list[object] = []
        self.requests: list[dict[str, Any]] = []
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

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.requests.append(body)
        reply = self.server.next_reply()
        if reply is FAIL:
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b'{"error": {"message": "scripted failure"}}')
            return
        text = str(reply)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        pieces = [text[i : i + 16] for i in range(0, len(text), 16)] or [""]
        for piece in pieces:
            self._event({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
        self._event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        prompt = sum(len(m["content"]) for m in body["messages"]) // 4
        self._event({"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": len(pieces)}})
        self.wfile.write(b"data: [DONE]\n\n")

    def _event(self, payload: dict[str, Any]) -> None:
        self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
        self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def scripted_server() -> Iterator[ScriptedOpenAI]:
    server = ScriptedOpenAI()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
