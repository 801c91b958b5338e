"""Web search behind one small interface: the real ``ddgs`` client and a deterministic fake for tests.

Besides searching, a backend reads a result's page: its main text, without navigation or boilerplate, which
the chat engine summarises when a search snippet is too thin (the learner's insights).
"""

from __future__ import annotations

import hashlib
import logging
from typing import Protocol, runtime_checkable
from urllib.parse import urlparse

from pydantic import BaseModel

from services.clipping.fetch import download
from services.config import Settings

log = logging.getLogger(__name__)

MAX_PAGE_BYTES = 2 * 1024 * 1024  # an article's HTML fits well within; past it, stop downloading
MAX_PAGE_CHARS = 20_000  # of extracted text: more than any prompt will take
READABLE_TYPES = frozenset({"text/html", "application/xhtml+xml", "text/plain"})


class WebResult(BaseModel):
    title: str
    url: str
    snippet: str

    @property
    def domain(self) -> str:
        return urlparse(self.url).netloc.lower().removeprefix("www.")


class WebSearchFailed(Exception):
    """The search engine could not be reached or refused to answer (offline, rate-limited, blocked)."""


@runtime_checkable  # the web app's dependency injection checks what it hands a page against its type
class WebSearch(Protocol):
    """What every web search backend does."""

    name: str
    engine: str  # who receives the question, as the composer's opt-in names it

    def search(self, query: str, max_results: int = 5) -> list[WebResult]:
        """Results for ``query``, trusted domains first; ``[]`` when the engine found nothing.

        Raises ``WebSearchFailed`` when the engine could not be asked (offline, DNS, rate limit): the chat
        says the web search failed instead of pretending the web had nothing.
        """
        ...

    def read(self, url: str) -> str:
        """The main text of the page at ``url``; ``""`` when it cannot be read, on any failure (never raises)."""
        ...


def prefer_trusted(results: list[WebResult], trusted: list[str]) -> list[WebResult]:
    """Stable sort: results from a trusted domain (or its subdomains) come first."""

    def is_trusted(result: WebResult) -> bool:
        return any(result.domain == d or result.domain.endswith("." + d) for d in trusted)

    return sorted(results, key=lambda r: not is_trusted(r))


class DdgsSearch:
    """DuckDuckGo & co. through the ``ddgs`` metasearch library."""

    name = "ddgs"
    engine = "le métamoteur ddgs (DuckDuckGo, Bing, Yahoo, Mojeek…)"

    def __init__(
        self, timeout: float, trusted_domains: list[str], region: str = "fr-fr", allow_private: bool = False
    ) -> None:
        self.timeout = timeout
        self.trusted = trusted_domains
        self.region = region
        # A search result (or its redirect) may point at this machine or the local network: the web UI,
        # a router's admin page. Pages are only read from public addresses (tests serve from 127.0.0.1).
        self.allow_private = allow_private

    def search(self, query: str, max_results: int = 5) -> list[WebResult]:
        from ddgs import DDGS
        from ddgs.exceptions import DDGSException

        try:
            raw = DDGS(timeout=int(self.timeout)).text(query, region=self.region, max_results=max_results * 2)
        except DDGSException as exc:
            if "no results" in str(exc).lower():  # ddgs says so when every engine answered with nothing
                return []
            raise WebSearchFailed(str(exc)) from exc
        except Exception as exc:  # DNS and socket errors come from ddgs's HTTP client, not as DDGSException
            raise WebSearchFailed(f"{type(exc).__name__}: {exc}") from exc
        results = [
            WebResult(title=r.get("title", ""), url=r.get("href", ""), snippet=r.get("body", ""))
            for r in raw
            if r.get("href")
        ]
        return prefer_trusted(results, self.trusted)[:max_results]

    def read(self, url: str) -> str:
        if urlparse(url).scheme not in ("http", "https"):  # never file://, ftp:// … from a search result
            return ""
        try:
            body, content_type, charset = self._download(url)
            return page_text(body, content_type, charset)[:MAX_PAGE_CHARS]
        except Exception as exc:  # network, HTTP status, parser: a page is a bonus, the snippet stands
            log.warning("could not read %s: %s", url, exc)
            return ""

    def _download(self, url: str) -> tuple[bytes, str, str | None]:
        """(body up to ``MAX_PAGE_BYTES``, content type, charset); an empty body for unreadable types."""
        accept = "text/html,application/xhtml+xml,text/plain;q=0.9"
        got = download(url, self.timeout, READABLE_TYPES, MAX_PAGE_BYTES, self.allow_private, accept)
        return got.body, got.content_type, got.charset


def page_text(body: bytes, content_type: str, charset: str | None = None) -> str:
    """The readable text of a downloaded body: trafilatura's main content for HTML, the text itself otherwise."""
    if not body:
        return ""
    if content_type == "text/plain":
        return (_decode(body, charset) or body.decode("utf-8", errors="replace")).strip()
    import trafilatura  # heavy (lxml, date parsers): only processes that read pages pay for it

    # Without a usable declared charset, bytes let trafilatura read the page's own <meta charset>.
    html = _decode(body, charset) or body
    text = trafilatura.extract(html, include_comments=False, include_tables=False, favor_precision=True)
    return (text or "").strip()


def _decode(body: bytes, charset: str | None) -> str | None:
    """``body`` in its declared charset; None when none is declared or Python does not know it."""
    if not charset:
        return None
    try:
        return body.decode(charset, errors="replace")
    except LookupError:
        return None


class FakeWebSearch:
    """Offline and deterministic: the same query always yields the same results, on a trusted domain.

    It records every query it was asked (a test's proof that nothing left the machine), and with
    ``unreachable`` it fails like a machine without network.
    """

    name = "fake"
    engine = "un moteur factice (tests)"

    def __init__(self, trusted_domains: list[str] | None = None, unreachable: bool = False) -> None:
        self.trusted = trusted_domains or ["wikipedia.org"]
        self.unreachable = unreachable
        self.queries: list[str] = []
        self.read_urls: list[str] = []  # every URL ``read`` was asked for, in order
        self._pages: dict[str, tuple[str, int]] = {}  # URL → (the query that produced it, its rank)

    def search(self, query: str, max_results: int = 5) -> list[WebResult]:
        self.queries.append(query)
        if self.unreachable:
            raise WebSearchFailed("ConnectError: [Errno -3] Temporary failure in name resolution")
        digest = hashlib.sha1(query.encode()).hexdigest()[:8]
        domain = self.trusted[0]
        results = [
            WebResult(
                title=f"{query} — référence {i + 1}",
                url=f"https://{domain}/wiki/{digest}-{i + 1}",
                snippet=f"Résumé de référence {i + 1} au sujet de : {query}.",
            )
            for i in range(min(max_results, 3))
        ]
        self._pages.update({r.url: (query, i + 1) for i, r in enumerate(results)})
        return results

    def read(self, url: str) -> str:
        self.read_urls.append(url)
        if url not in self._pages:  # like a dead link: only pages this fake "published" can be read
            return ""
        query, rank = self._pages[url]
        return (
            f"Page de référence {rank} au sujet de : {query}. "
            "Elle expose les faits établis sur ce sujet et cite ses sources. "
            "Elle en retrace le contexte historique et géographique. "
            "Elle distingue enfin ce qui fait consensus de ce qui reste débattu."
        )


def make_web_search(settings: Settings) -> WebSearch:
    if settings.web_search_backend == "fake":
        return FakeWebSearch(settings.trusted_domains)
    if settings.web_search_backend == "unreachable":
        return FakeWebSearch(settings.trusted_domains, unreachable=True)
    return DdgsSearch(settings.web_search_timeout, settings.trusted_domains)
