"""A downloaded page's main text as Markdown, with the metadata Obsidian's Web Clipper writes (trafilatura)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PAGE_TYPES = frozenset({"text/html", "application/xhtml+xml"})
MIN_WORDS = 12
_IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<url>[^)\s]+)\)")


class NothingToClip(ValueError):
    """The page has no main text trafilatura can find (a login wall, an app shell, an empty page)."""


@dataclass
class Page:
    url: str
    title: str
    markdown: str  # the main text, images as ``![alt](absolute url)``
    author: str = ""
    published: str = ""  # as the page states it (ISO day when trafilatura could read one)
    description: str = ""
    site: str = ""
    images: list[str] = field(default_factory=list)  # absolute URLs, in order, each once


def extract_page(html: str | bytes, url: str) -> Page:
    """The page's article: title, author, date, description and the text as Markdown."""
    import trafilatura  # heavy (lxml, date parsers): only the processes that clip pay for it

    options = {"url": url, "include_images": True, "include_formatting": True, "include_links": True}
    markdown = trafilatura.extract(html, output_format="markdown", include_comments=False, **options)
    if not markdown or len(markdown.split()) < MIN_WORDS:  # a menu, a cookie wall: not an article
        raise NothingToClip(f"no article text found at {url}")
    meta = trafilatura.bare_extraction(html, url=url, with_metadata=True, only_with_metadata=False)
    data = meta.as_dict() if meta is not None and hasattr(meta, "as_dict") else {}
    images = list(dict.fromkeys(m["url"] for m in _IMAGE.finditer(markdown)))
    return Page(
        url=url,
        title=(data.get("title") or "").strip() or _first_heading(markdown) or url,
        markdown=markdown.strip(),
        author=(data.get("author") or "").strip(),
        published=(data.get("date") or "").strip(),
        description=(data.get("description") or "").strip(),
        site=(data.get("sitename") or "").strip(),
        images=images,
    )


def replace_images(markdown: str, saved: dict[str, str]) -> str:
    """``![alt](url)`` → ``![[path|alt]]`` (Obsidian's embed, by vault path) for each image saved; a failed one
    keeps its URL."""

    def embed(match: re.Match[str]) -> str:
        if match["url"] not in saved:
            return match.group()
        alt = re.sub(r"[|\[\]]", " ", match["alt"]).strip()
        return f"![[{saved[match['url']]}|{alt}]]" if alt else f"![[{saved[match['url']]}]]"

    return _IMAGE.sub(embed, markdown)


def _first_heading(markdown: str) -> str:
    match = re.search(r"^#+\s+(.+)$", markdown, re.M)
    return match.group(1).strip() if match else ""
