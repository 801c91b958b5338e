"""Browser tests: Debian's Chromium (headless, through Playwright) against the real system.

Every test drives the web server of the session's one running system (``live``, ``tests/support/live.py``).
Screenshots land in ``tests/artifacts/`` (git-ignored); those the README shows also in ``$OBSIRAG_SCREENSHOTS``
(``make screenshots``: ``docs/images/``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import ConsoleMessage, Page

from tests.conftest import ROOT

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "tests" / "artifacts"
# The README shows these four (docs/images/); `make screenshots` sets the variable to retake them.
README_PICTURES = ("chat", "graph", "dashboard", "research")
PICTURES_ENV = "OBSIRAG_SCREENSHOTS"
VIEWPORT = {"width": 1280, "height": 800}


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    if not CHROMIUM.exists():
        pytest.fail("browser tests need Debian's Chromium: apt-get install -y chromium (make test does it as root)")
    args = [*browser_type_launch_args.get("args", []), "--disable-gpu", "--disable-quic"]
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": args}


@pytest.fixture(scope="session")
def base_url(live_url: str) -> str:
    """Pages open on the live system (pytest-playwright's own ``base_url`` is empty)."""
    return live_url


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any], base_url: str) -> dict[str, Any]:
    return {**browser_context_args, "base_url": base_url.rstrip("/"), "viewport": VIEWPORT, "locale": "fr-FR"}


@pytest.fixture
def ui(page: Page) -> Iterator[Page]:
    """A page that fails its test on any console error or uncaught exception."""
    problems: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.append(f"console error on {page.url}: {message.text}")

    page.on("console", on_console)
    page.on("pageerror", lambda error: problems.append(f"uncaught error on {page.url}: {error}"))
    page.set_default_timeout(30_000)
    yield page
    assert not problems, "\n".join(problems)


def screenshot(page: Page, name: str, above: str | None = None) -> Path:
    """Save what a person would see, at 1280×800, under tests/artifacts/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    target = ARTIFACTS / f"{name}.png"
    box = page.locator(above).bounding_box() if above else None  # only what lies above this element
    clip = {"x": 0, "y": 0, "width": VIEWPORT["width"], "height": box["y"]} if box else None
    page.screenshot(path=str(target), clip=clip)
    if (folder := os.environ.get(PICTURES_ENV)) and name in README_PICTURES:
        shutil.copyfile(target, Path(folder) / target.name)
    return target
