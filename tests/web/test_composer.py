"""The chat composer's choices: « rédiger avec le modèle » holds for one question only (#39)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from litestar.testing import TestClient

from tests.support.web_app import html

APP_JS = Path(__file__).parents[2] / "web" / "static" / "app.js"
# Just enough DOM for app.js's composer handler: the form, its textarea and its per-question boxes.
HARNESS = """
const handlers = {};
const boxes = [{ checked: true }];
const form = {
  matches: () => false,
  querySelector: () => ({ value: "Quel budget ?" }),
  querySelectorAll: (selector) => (selector === "[data-per-question]" ? boxes : []),
};
global.document = {
  addEventListener: (name, fn) => { (handlers[name] = handlers[name] || []).push(fn); },
  getElementById: (id) => (id === "composer" ? form : null),
};
global.window = global;
require(process.argv[1]);
const sent = (successful) => ({ detail: { elt: form, successful } });
handlers["htmx:afterRequest"].forEach((fn) => fn(sent(false)));
const afterFailure = boxes[0].checked;
handlers["htmx:afterRequest"].forEach((fn) => fn(sent(true)));
console.log(JSON.stringify({ afterFailure, afterSent: boxes[0].checked }));
"""


def test_the_write_choice_is_unticked_and_marked_per_question(client: TestClient) -> None:
    page = html(client, "/")
    box = page[page.index('id="write-opt-in"') :].split(">", 2)[1]
    assert 'name="write"' in box and "data-per-question" in box and "checked" not in box
    web = page[page.index('id="web-opt-in"') :].split(">", 2)[1]
    assert "data-per-question" not in web  # the web choice is a setting of the page, it stays


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run app.js")
def test_app_js_unticks_the_write_choice_once_the_question_is_sent() -> None:
    node = shutil.which("node") or "node"
    run = subprocess.run([node, "-e", HARNESS, str(APP_JS)], capture_output=True, text=True, check=True)
    # Kept when the request failed (the question is asked again as it was), unticked once it was sent.
    assert json.loads(run.stdout) == {"afterFailure": True, "afterSent": False}
