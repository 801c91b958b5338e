"""A local web site whose pages a test decides (path → content type and body), standing in for the web."""

from __future__ import annotations

from contextlib import AbstractContextManager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support.scripted_openai import serving as serve_in_thread


class Pages(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.daemon_threads = True
        self.pages: dict[str, tuple[str, bytes]] = {}
        self.asked: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Pages

    def do_GET(self) -> None:
        self.server.asked.append(self.path)
        page = self.server.pages.get(self.path)
        if page is None:
            self.send_error(404)
            return
        content_type, body = page
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def serving() -> AbstractContextManager[Pages]:
    """The site answering in a thread until the block ends."""
    return serve_in_thread(Pages())
