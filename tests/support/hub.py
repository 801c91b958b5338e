"""A local HTTP server that serves model folders the way the Hugging Face Hub does, for ``huggingface_hub``
pointed at it through ``HF_ENDPOINT`` (no hub is reachable here).

It answers what ``huggingface_hub`` asks: the repo's info (``/api/models/{id}[/revision/{rev}]``), its file
tree (``/api/models/{id}/tree/{rev}``), and each file (``/{id}/resolve/{rev}/{path}``, HEAD and GET, with
``Range`` so that an interrupted download resumes). Large files are "LFS" files: their ETag is their sha256,
as on the hub. ``bytes_per_second`` slows the file bodies down, so that a test can kill a pull halfway;
``requests`` records what was asked (method, path, Range header).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

LFS_FROM_BYTES = 10_000  # the hub stores bigger files in LFS; smaller ones are plain git blobs
CHUNK = 64 * 1024


@dataclass
class HubFile:
    path: str
    source: Path
    size: int
    sha256: str
    git_oid: str

    @property
    def lfs(self) -> bool:
        return self.size >= LFS_FROM_BYTES


@dataclass
class HubRepo:
    repo_id: str
    files: dict[str, HubFile]
    commit: str


@dataclass
class Hub:
    """The served repos, the requests seen, and the pace of file bodies (None: as fast as the socket)."""

    repos: dict[str, HubRepo] = field(default_factory=dict)
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)
    bytes_per_second: float | None = None
    damaged: set[str] = field(default_factory=set)  # paths served with one byte changed (the checksum says so)
    url: str = ""

    def add(self, repo_id: str, folder: Path) -> HubRepo:
        files = {}
        for source in sorted(p for p in folder.rglob("*") if p.is_file()):
            size = source.stat().st_size
            sha256, git = hashlib.sha256(), hashlib.sha1(b"blob %d\0" % size)
            with source.open("rb") as handle:
                while piece := handle.read(1 << 20):
                    sha256.update(piece)
                    git.update(piece)
            path = source.relative_to(folder).as_posix()
            files[path] = HubFile(path, source, size, sha256.hexdigest(), git.hexdigest())
        commit = hashlib.sha1("".join(f.git_oid for f in files.values()).encode()).hexdigest()
        self.repos[repo_id] = HubRepo(repo_id, files, commit)
        return self.repos[repo_id]


def serve_hub(hub: Hub) -> ThreadingHTTPServer:
    """Start serving ``hub`` on a free loopback port (``hub.url`` set); the caller shuts the server down."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    server.daemon_threads = True
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _handler(hub: Hub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def do_GET(self) -> None:
            self._answer(body=True)

        def _answer(self, body: bool) -> None:
            path = unquote(urlsplit(self.path).path)
            hub.requests.append((self.command, path, self.headers.get("Range")))
            if path.startswith("/api/models/"):
                self._api(path.removeprefix("/api/models/"))
            elif "/resolve/" in path:
                self._file(path.lstrip("/"), body)
            else:
                self._missing("EntryNotFound")

        def _api(self, rest: str) -> None:
            for repo in hub.repos.values():
                if rest == repo.repo_id or rest.startswith(repo.repo_id + "/revision/"):
                    siblings = [{"rfilename": name} for name in repo.files]
                    return self._json({"id": repo.repo_id, "sha": repo.commit, "siblings": siblings})
                if rest.startswith(repo.repo_id + "/tree/"):
                    return self._json([_tree_entry(f) for f in repo.files.values()])
            self._missing("RepoNotFound")

        def _file(self, rest: str, body: bool) -> None:
            repo_id, _, tail = rest.partition("/resolve/")
            repo = hub.repos.get(repo_id)
            name = tail.partition("/")[2]
            if repo is None or name not in repo.files:
                return self._missing("RepoNotFound" if repo is None else "EntryNotFound")
            served = repo.files[name]
            start = _range_start(self.headers.get("Range"))
            self.send_response(206 if start else 200)
            self.send_header("X-Repo-Commit", repo.commit)
            self.send_header("ETag", f'"{served.sha256 if served.lfs else served.git_oid}"')
            self.send_header("Content-Length", str(served.size - start))
            if start:
                self.send_header("Content-Range", f"bytes {start}-{served.size - 1}/{served.size}")
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()
            if body:
                self._stream(served.source, start, served.path in hub.damaged)

        def _stream(self, source: Path, start: int, damaged: bool) -> None:
            with source.open("rb") as handle:
                handle.seek(start)
                while piece := handle.read(CHUNK):
                    if damaged:
                        piece, damaged = bytes([piece[0] ^ 0xFF]) + piece[1:], False
                    try:
                        self.wfile.write(piece)
                    except (BrokenPipeError, ConnectionResetError):
                        return  # the downloader was killed
                    if hub.bytes_per_second:
                        time.sleep(len(piece) / hub.bytes_per_second)

        def _json(self, data: object) -> None:
            payload = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command == "GET":
                self.wfile.write(payload)

        def _missing(self, code: str) -> None:
            payload = json.dumps({"error": f"{code}: not on this hub"}).encode()
            self.send_response(404)
            self.send_header("X-Error-Code", code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command == "GET":
                self.wfile.write(payload)

    return Handler


def _tree_entry(served: HubFile) -> dict[str, object]:
    entry: dict[str, object] = {"type": "file", "path": served.path, "size": served.size, "oid": served.git_oid}
    if served.lfs:
        entry["lfs"] = {"oid": served.sha256, "size": served.size, "pointerSize": 134}
    return entry


def _range_start(header: str | None) -> int:
    if not header or not header.startswith("bytes="):
        return 0
    return int(header.removeprefix("bytes=").split("-")[0] or 0)
