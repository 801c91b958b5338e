"""A clip's images downloaded beside it (``obsirag/clips/assets/``), each checked: its type an image's, its size
capped, its address public. One that fails keeps its URL in the note; the clip never fails for an image."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from urllib.parse import urlparse

import httpx

from services.clipping.fetch import download

log = logging.getLogger(__name__)
IMAGE_TYPES = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/avif": ".avif",
    "image/svg+xml": ".svg",
}
MAX_IMAGES = 30


def save_images(
    urls: list[str], assets: Path, timeout: float, max_bytes: int, allow_private: bool
) -> tuple[dict[str, Path], list[str]]:
    """({url: file saved}, [urls that failed]). A file is named by the hash of its bytes: the same image from
    two clips, or a clip taken again, is one file."""
    saved: dict[str, Path] = {}
    failed: list[str] = []
    for url in urls[:MAX_IMAGES]:
        try:
            saved[url] = _save(url, assets, timeout, max_bytes, allow_private)
        except (httpx.HTTPError, OSError, ValueError) as exc:
            log.info("clip image %s kept as a link: %s", url, exc)
            failed.append(url)
    return saved, failed + urls[MAX_IMAGES:]


def _save(url: str, assets: Path, timeout: float, max_bytes: int, allow_private: bool) -> Path:
    if urlparse(url).scheme not in ("http", "https"):
        raise ValueError("not a web address")
    got = download(url, timeout, frozenset(IMAGE_TYPES), max_bytes, allow_private, accept="image/*")
    if not got.body:
        raise ValueError(f"not an image ({got.content_type or 'no type'})")
    if got.cut:
        raise ValueError(f"larger than {max_bytes // 1024} KB")
    target = assets / f"{hashlib.sha256(got.body).hexdigest()[:16]}{IMAGE_TYPES[got.content_type]}"
    if not target.exists():
        assets.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.part")
        partial.write_bytes(got.body)
        partial.replace(target)
    return target
