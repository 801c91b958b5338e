"""``clip_url``: a web page as ``obsirag/clips/YYYY-MM/<title>.md``, its frontmatter the one Obsidian's Web Clipper
writes by default (title, source, author, published, created, description, tags: clippings), its images under
``obsirag/clips/assets/``. The same URL clipped again updates its clip (its ``created`` kept), never a second one."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from services.clipping.extract import PAGE_TYPES, Page, extract_page, replace_images
from services.clipping.fetch import download
from services.clipping.images import save_images
from services.config import Settings
from services.vault.artifacts import (
    WRITE_ATTEMPTS,
    create_numbered,
    generated_path,
    render_frontmatter,
    replace_if_unchanged,
    scan_artifacts,
    slugify,
    vault_relative,
)

FOLDER = "clips"
MAX_PAGE_BYTES = 4 * 1024 * 1024


class ClipError(ValueError):
    """The page could not be clipped; the message says why, in one line."""


@dataclass
class Clipped:
    path: Path
    relative: str  # vault-relative
    title: str
    updated: bool  # the URL had a clip already: it was rewritten
    images: int = 0
    failed_images: list[str] = field(default_factory=list)


def clip_url(settings: Settings, url: str, now: datetime) -> Clipped:
    """Fetch ``url`` and write (or update) its clip; ``ClipError`` when it is not a web page with text."""
    if urlparse(url).scheme not in ("http", "https") or not urlparse(url).netloc:
        raise ClipError(f"not a web address: {url!r} (http:// or https://)")
    page = _fetch(settings, url)
    vault = settings.vault
    existing, meta = find_clip(vault, {url, page.url})
    assets = generated_path(vault, f"{FOLDER}/assets")
    timeout, cap, private = settings.web_search_timeout, settings.clip_image_max_bytes, settings.clip_allow_private
    saved, failed = save_images(page.images, assets, timeout, cap, private)
    embeds = {u: vault_relative(vault, p) for u, p in saved.items()}  # ![[obsirag/clips/assets/<hash>.png]]
    local = now.astimezone()
    created = str(meta.get("created") or local.date().isoformat())  # taken again: when it was first taken
    text = render_clip(page, url, created, replace_images(page.markdown, embeds))
    path = _rewrite(existing, text) if existing else _create(vault, page.title, local, text)
    return Clipped(path, vault_relative(vault, path), page.title, existing is not None, len(saved), failed)


def render_clip(page: Page, url: str, created: str, markdown: str) -> str:
    frontmatter = {
        "title": page.title,
        "source": url,
        "author": [f"[[{page.author}]]"] if page.author else [],
        "published": page.published or None,
        "created": created,
        "description": page.description or None,
        "tags": ["clippings"],
    }
    return render_frontmatter({k: v for k, v in frontmatter.items() if v is not None}) + "\n" + markdown + "\n"


def find_clip(vault: Path, urls: set[str]) -> tuple[Path | None, dict[str, Any]]:
    """The clip already taken of one of ``urls`` (its frontmatter's ``source``), with its frontmatter."""
    found = ((path, meta) for path, meta in scan_artifacts(vault, FOLDER) if meta.get("source") in urls)
    return next(found, (None, {}))


def _fetch(settings: Settings, url: str) -> Page:
    import httpx

    try:
        got = download(url, settings.web_search_timeout, PAGE_TYPES, MAX_PAGE_BYTES, settings.clip_allow_private)
    except httpx.HTTPStatusError as exc:
        raise ClipError(f"the page answered {exc.response.status_code}: {url}") from exc
    except httpx.HTTPError as exc:
        raise ClipError(f"cannot fetch {url}: {exc}") from exc
    if not got.body:
        raise ClipError(f"not a web page ({got.content_type or 'no type'}): {url}")
    html = got.body.decode(got.charset, errors="replace") if got.charset else got.body
    try:
        return extract_page(html, got.url)
    except ValueError as exc:
        raise ClipError(str(exc)) from exc


def _create(vault: Path, title: str, now: datetime, text: str) -> Path:
    try:
        return create_numbered(vault, f"{FOLDER}/{now:%Y-%m}/{slugify(title) or 'clip'}", text)
    except FileExistsError as exc:
        raise ClipError(str(exc)) from exc


def _rewrite(path: Path, text: str) -> Path:
    """The clip replaced in one step (the watcher never reads half of it), read again if it changed meanwhile."""
    for _ in range(WRITE_ATTEMPTS):
        if replace_if_unchanged(path, path.read_bytes(), text):
            return path
    raise ClipError(f"{path.name} kept changing while it was being updated")
