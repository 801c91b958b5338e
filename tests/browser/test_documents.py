"""A cited PDF page opens in Chromium's own PDF viewer, at that page (the web app alone, on a document vault)."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from playwright.sync_api import Browser

from services.config import Settings
from tests.browser.conftest import VIEWPORT, screenshot
from web.app import create_app
from web.urls import source_url

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def document_site(tmp_path_factory: pytest.TempPathFactory, documents: dict[str, Path]) -> Iterator[str]:
    """The web app serving a vault that holds one PDF (no system behind it: the file route reads the vault)."""
    root = tmp_path_factory.mktemp("pdf-site")
    (root / "vault" / "Docs").mkdir(parents=True)
    shutil.copy(documents["Manuel.pdf"], root / "vault" / "Docs" / "Manuel.pdf")
    settings = Settings(vault=root / "vault", data_dir=root / "data", redis_url=f"unix://{root}/none.sock")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


def test_a_cited_pdf_page_opens_in_the_browsers_viewer(browser: Browser, document_site: str) -> None:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    downloads: list[object] = []
    page.on("download", lambda download: downloads.append(download))
    response = page.goto(document_site + source_url("Docs/Manuel.pdf", None, 2))
    assert response.status == 200 and response.headers["content-type"] == "application/pdf"
    # Chromium's viewer hosts the PDF in a page of its own (a dark background around the pages); the
    # file is shown, not downloaded, although the route serves it sandboxed (CSP ``sandbox``).
    page.wait_for_timeout(1500)
    assert not downloads and "rgb(40, 40, 40)" in page.evaluate("getComputedStyle(document.body).backgroundColor")
    screenshot(page, "document-pdf-page-2")  # the viewer at « 2 / 3 »: what a person would see
    context.close()
