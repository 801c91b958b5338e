"""Web search behind one small interface: the real ``ddgs`` client and a deterministic fake for tests."""

from __future__ import annotations

import hashlib
import logging
from typing import Protocol
from urllib.parse import urlparse

from pydantic import BaseModel

from services.config import Settings

log = logging.getLogger(__name__)


class WebResult(BaseModel):
    title: str
    url: str
    snippet: str

    @property
    def domain(self) -> str:
        return urlparse(self.url).netloc.lower().removeprefix("www.")


class WebSearch(Protocol):
    """What every web search backend does."""

    name: str

    def search(self, query: str, max_results: int = 5) -> list[WebResult]:
        """Results for ``query``, trusted domains first; ``[]`` when offline or on any failure (never raises)."""
        ...


def prefer_trusted(results: list[WebResult], trusted: list[str]) -> list[WebResult]:
    """Stable sort: results from a trusted domain (or its subdomains) come first."""

    def is_trusted(result: WebResult) -> bool:
        return any(result.domain == d or result.domain.endswith("." + d) for d in trusted)

    return sorted(results, key=lambda r: not is_trusted(r))


class DdgsSearch:
    """DuckDuckGo & co. through the ``ddgs`` metasearch library."""

    name = "ddgs"

    def __init__(self, timeout: float, trusted_domains: list[str], region: str = "fr-fr") -> None:
        self.timeout = timeout
        self.trusted = trusted_domains
        self.region = region

    def search(self, query: str, max_results: int = 5) -> list[WebResult]:
        from ddgs import DDGS
        from ddgs.exceptions import DDGSException

        try:
            raw = DDGS(timeout=int(self.timeout)).text(query, region=self.region, max_results=max_results * 2)
        except DDGSException as exc:  # offline, rate-limited, blocked: the vault answer stands alone
            log.warning("web search failed: %s", exc)
            return []
        results = [
            WebResult(title=r.get("title", ""), url=r.get("href", ""), snippet=r.get("body", ""))
            for r in raw
            if r.get("href")
        ]
        return prefer_trusted(results, self.trusted)[:max_results]


class FakeWebSearch:
    """Offline and deterministic: the same query always yields the same results, on a trusted domain."""

    name = "fake"

    def __init__(self, trusted_domains: list[str] | None = None) -> None:
        self.trusted = trusted_domains or ["wikipedia.org"]
        self.queries: list[str] = []

    def search(self, query: str, max_results: int = 5) -> list[WebResult]:
        self.queries.append(query)
        digest = hashlib.sha1(query.encode()).hexdigest()[:8]
        domain = self.trusted[0]
        return [
            WebResult(
                title=f"{query} — référence {i + 1}",
                url=f"https://{domain}/wiki/{digest}-{i + 1}",
                snippet=f"Résumé de référence {i + 1} au sujet de : {query}.",
            )
            for i in range(min(max_results, 3))
        ]


def make_web_search(settings: Settings) -> WebSearch:
    if settings.web_search_backend == "fake":
        return FakeWebSearch(settings.trusted_domains)
    return DdgsSearch(settings.web_search_timeout, settings.trusted_domains)
