"""Every relative link and anchor in README.md and docs/ leads somewhere (issue #38)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|!\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lowercased, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*$", CODE.sub("", page.read_text(encoding="utf-8")), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def links(page: Path) -> list[str]:
    text = CODE.sub("", page.read_text(encoding="utf-8"))
    return [a or b for a, b in LINK.findall(text)]


def test_every_relative_link_and_anchor_resolves() -> None:
    broken: list[str] = []
    for page in PAGES:
        for target in links(page):
            if re.match(r"[a-z]+:", target):  # http(s), mailto: not checked offline
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken
    assert sum(len(links(p)) for p in PAGES) >= 5  # the check reads links at all


def test_the_checker_sees_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("# Titre à voir\n\n[a](#titre-à-voir) [b](nulle.md) `[c](x.md)`\n", encoding="utf-8")
    assert links(page) == ["#titre-à-voir", "nulle.md"] and "titre-à-voir" in anchors(page)


def test_the_readme_shows_the_pictures_the_browser_tests_take() -> None:
    """README's pictures are screenshots of pages a browser test checks; `make screenshots` retakes them."""
    from tests.browser.conftest import README_PICTURES

    shown = re.findall(r"!\[[^\]]*\]\(docs/images/([\w-]+)\.png\)", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert sorted(shown) == sorted(README_PICTURES)
    assert all((ROOT / "docs" / "images" / f"{name}.png").stat().st_size > 20_000 for name in shown)
    browser_tests = "".join(path.read_text(encoding="utf-8") for path in (ROOT / "tests" / "browser").glob("test_*.py"))
    taken = set(re.findall(r'screenshot\(\w+, "([\w-]+)"', browser_tests))
    assert set(README_PICTURES) <= taken
