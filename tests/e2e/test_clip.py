"""`obsirag clip URL` through the running system (the session's shared ``obsirag up``): it returns once the clip
is indexed, and `obsirag search` finds it at once (issue #36 point 3)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.support.system import System
from tests.support.web_pages import serving
from workers.cli import main

pytestmark = pytest.mark.e2e
PAGE = """<html><head><meta charset="utf-8"><title>Le bokashi en cuisine</title></head><body><article>
<h1>Le bokashi en cuisine</h1><p>Le bokashi fait fermenter les restes de cuisine dans un seau hermétique avec du son
inoculé de micro-organismes ; au bout de deux semaines, le pré-compost s'enfouit au potager.</p>
</article></body></html>"""


def test_clip_returns_once_indexed_and_the_clip_is_found_by_search(
    live: System, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OBSIRAG_CLIP_ALLOW_PRIVATE", "true")  # the page is served from this machine
    where = ["--vault", str(live.settings.vault), "--data", str(live.settings.data_dir)]
    with serving() as site:
        site.pages["/bokashi"] = ("text/html; charset=utf-8", PAGE.encode())
        result = CliRunner().invoke(main, ["clip", f"{site.url}/bokashi", "--json", *where])
    assert result.exit_code == 0, (result.output, result.exception)
    clipped = json.loads(result.stdout)
    assert clipped["indexed"] and clipped["path"].startswith("obsirag/clips/")
    found = CliRunner().invoke(main, ["search", "seau hermétique de son fermenté", "--json", *where])
    assert clipped["path"] in [hit["path"] for hit in json.loads(found.stdout)]  # no wait: it was indexed
