"""The graph's labels as Chromium draws them on the sample vault, at a desktop's and a phone's width: each
next to its node, none over another label or another node (#39 point 10)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import VIEWPORT, screenshot
from tests.support.system import System

pytestmark = [pytest.mark.browser]
PHONE = {"width": 390, "height": 844}
NEAR_PX = 4  # the farthest a label may be from its node's disc, in screen pixels
# Every node's disc and every label's box, in screen pixels, as drawn.
DRAWN = """svg => ({
  nodes: [...svg.querySelectorAll("a.node circle")].map(c => {
    const b = c.getBoundingClientRect();
    return {path: c.parentElement.dataset.path, x: b.left + b.width / 2, y: b.top + b.height / 2, r: b.width / 2};
  }),
  labels: [...svg.querySelectorAll("g.labels text")].map(t => {
    const b = t.getBoundingClientRect();
    return {path: t.dataset.path, text: t.textContent, left: b.left, top: b.top, right: b.right, bottom: b.bottom,
            size: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a};
  }),
  box: svg.getBoundingClientRect().toJSON(),
})"""


def gap(label: dict[str, Any], node: dict[str, Any]) -> float:
    """How far the label's box is from the node's disc (negative: it covers part of it)."""
    dx = max(label["left"] - node["x"], 0, node["x"] - label["right"])
    dy = max(label["top"] - node["y"], 0, node["y"] - label["bottom"])
    return math.hypot(dx, dy) - node["r"]


def crossing(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


@pytest.mark.parametrize(("name", "viewport", "least"), [("desktop", VIEWPORT, 10), ("phone", PHONE, 3)])
def test_every_label_sits_by_its_node_over_no_other(
    ui: Page, live: System, name: str, viewport: dict[str, int], least: int
) -> None:
    ui.set_viewport_size(viewport)
    ui.goto("/graph")
    expect(ui.locator("#graph-canvas svg a.node")).to_have_count(int(ui.locator("#metric-nodes").inner_text()))
    drawn = ui.locator("#graph-canvas svg").evaluate(DRAWN)
    screenshot(ui, f"graph-labels-{name}")
    nodes, labels = {n["path"]: n for n in drawn["nodes"]}, drawn["labels"]
    assert len(labels) >= least, f"{len(labels)} labels drawn at {viewport['width']} px"
    box = drawn["box"]
    problems = []
    for i, label in enumerate(labels):
        own = nodes[label["path"]]
        if not -0.5 <= gap(label, own) <= NEAR_PX:
            problems.append(f"« {label['text']} » is {gap(label, own):.1f} px from its node")
        if label["size"] < 9:
            problems.append(f"« {label['text']} » is {label['size']:.1f} px high: unreadable")
        inside = box["left"] <= label["left"] and label["right"] <= box["right"]
        if not (inside and box["top"] <= label["top"] and label["bottom"] <= box["bottom"]):
            problems.append(f"« {label['text']} » leaves the drawing")
        covered = [n["path"] for n in drawn["nodes"] if n is not own and gap(label, n) < -0.5]
        problems += [f"« {label['text']} » is drawn over the node {path}" for path in covered]
        problems += [f"« {label['text']} » overlaps « {o['text']} »" for o in labels[i + 1 :] if crossing(label, o)]
    assert not problems, f"at {viewport['width']} px:\n" + "\n".join(problems)
