"""Reading web pages: the real ``DdgsSearch.read`` against a local HTTP server, and the fake's determinism."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from services.chat.websearch import MAX_PAGE_BYTES, MAX_PAGE_CHARS, DdgsSearch, FakeWebSearch

ARTICLE = [
    "Lima est la capitale du Pérou depuis sa fondation par Francisco Pizarro en 1535, sur les rives du Rímac.",
    "La ville concentre près d'un tiers de la population du pays et l'essentiel de son activité économique.",
    "Son centre historique, riche de couvents et de balcons coloniaux, est inscrit au patrimoine mondial.",
    "Le climat y est doux et sec toute l'année, sous un ciel souvent couvert que les Liméniens appellent garúa.",
]
NAV = "Accueil Boutique Connexion Abonnez-vous à notre lettre"
FOOTER = "Mentions légales Politique de cookies Tous droits réservés"
ARTICLE_HTML = f"""<!doctype html>
<html lang="fr"><head><meta charset="utf-8"><title>Lima, capitale du Pérou</title></head>
<body>
<header><nav><ul>{"".join(f'<li><a href="/{w}">{w}</a></li>' for w in NAV.split())}</ul></nav></header>
<main><article>
<h1>Lima, capitale du Pérou</h1>
{"".join(f"<p>{sentence}</p>" for sentence in ARTICLE)}
</article></main>
<footer><p>{FOOTER}</p></footer>
</body></html>""".encode()
HUGE_CHUNK = b"<p>" + b"Une phrase de remplissage qui se r\xc3\xa9p\xc3\xa8te encore et encore. " * 40 + b"</p>\n"
HUGE_TOTAL = 32 * MAX_PAGE_BYTES  # far more than the cap: a reader that ignores it takes a long time


class Site(BaseHTTPRequestHandler):
    huge_sent = 0
    huge_done = threading.Event()
    requests_seen: list[str] = []  # noqa: RUF012  # shared on purpose: what the server was asked, across tests

    def do_GET(self) -> None:
        Site.requests_seen.append(self.path)
        if self.path == "/article":
            self._send("text/html; charset=utf-8", ARTICLE_HTML)
        elif self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/article")
            self.end_headers()
        elif self.path == "/notes.txt":
            self._send("text/plain; charset=utf-8", "Des notes en texte brut, sur le Pérou.\n".encode())
        elif self.path == "/report.pdf":
            self._send("application/pdf", b"%PDF-1.7\n" + b"0" * 4096)
        elif self.path == "/huge":
            self._huge()
        else:
            self.send_error(404)

    def _send(self, content_type: str, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _huge(self) -> None:
        """Streams until the client hangs up (or everything was sent), counting what left."""
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(HUGE_TOTAL))
        self.end_headers()
        try:
            self.wfile.write(b"<html><body><article>")
            while Site.huge_sent < HUGE_TOTAL - len(HUGE_CHUNK):
                self.wfile.write(HUGE_CHUNK)
                Site.huge_sent += len(HUGE_CHUNK)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the reader stopped at its cap: what this test wants
        finally:
            Site.huge_done.set()

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def web() -> DdgsSearch:
    return DdgsSearch(timeout=30.0, trusted_domains=["wikipedia.org"], allow_private=True)  # the site is local


def test_an_article_page_gives_its_text_without_navigation_or_footer(web: DdgsSearch, site: str) -> None:
    text = web.read(f"{site}/article")
    assert all(sentence in text for sentence in ARTICLE)
    assert "Boutique" not in text and "cookies" not in text


def test_redirects_are_followed_and_plain_text_is_read_as_is(web: DdgsSearch, site: str) -> None:
    assert ARTICLE[0] in web.read(f"{site}/moved")
    assert web.read(f"{site}/notes.txt") == "Des notes en texte brut, sur le Pérou."


def test_unreadable_pages_give_nothing(web: DdgsSearch, site: str) -> None:
    assert web.read(f"{site}/report.pdf") == ""  # not a text content type
    assert web.read(f"{site}/missing") == ""  # HTTP 404
    assert web.read("file:///etc/passwd") == ""  # only http(s), whatever a result links to
    assert web.read("not a url") == ""


def test_a_closed_port_gives_nothing(web: DdgsSearch) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert web.read(f"http://127.0.0.1:{port}/") == ""


def test_pages_on_this_machine_or_a_private_network_are_never_read(site: str) -> None:
    guarded = DdgsSearch(timeout=30.0, trusted_domains=["wikipedia.org"])  # the product's default
    Site.requests_seen.clear()
    assert guarded.read(f"{site}/article") == ""  # 127.0.0.1: the web UI could be there
    assert guarded.read("http://localhost:8000/") == ""
    assert guarded.read("http://192.168.1.1/admin") == ""
    assert guarded.read("http://[::1]:8000/") == ""
    assert Site.requests_seen == []  # refused before any connection was made


def test_a_huge_page_is_read_up_to_the_byte_cap_only(web: DdgsSearch, site: str) -> None:
    text = web.read(f"{site}/huge")
    assert "Une phrase de remplissage" in text and len(text) <= MAX_PAGE_CHARS
    assert Site.huge_done.wait(30)  # the reader hung up, so the server stopped writing
    assert Site.huge_sent < HUGE_TOTAL // 2  # the cap plus what socket buffers held, not the whole page


def test_the_fake_reads_only_its_own_results_and_always_the_same_text() -> None:
    fake = FakeWebSearch()
    results = fake.search("capitale du Pérou")
    first = fake.read(results[0].url)
    assert "capitale du Pérou" in first and len(first.split(". ")) >= 3
    assert FakeWebSearch().read(results[0].url) == ""  # another fake never published it
    again = FakeWebSearch()
    again.search("capitale du Pérou")
    assert again.read(results[0].url) == first  # deterministic across instances
    assert fake.read(results[1].url) != first  # each page its own text
    assert fake.read("https://example.org/elsewhere") == ""
    assert fake.read_urls == [results[0].url, results[1].url, "https://example.org/elsewhere"]
