"""Obsidian Markdown rendering: wikilinks, embeds, callouts, citations, sanitising."""

from __future__ import annotations

from pathlib import Path

from services.catalog.models import Source
from services.vault.addresses import heading_slug, section
from web.rendering import CatalogLinks, MarkdownRenderer, sanitize
from web.urls import WebUrls

NOTES = {
    "A.md": "# A\n\n## Part one\n\ntext one\n\n### Deeper\n\ndeep\n\n## Part two\n\ntext two\n",
    "Loop.md": "![[Loop]] and ![[A#Part two]]",
}


def renderer(tmp_path: Path) -> MarkdownRenderer:
    for name, text in NOTES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "img.png").write_bytes(b"\x89PNG")
    return MarkdownRenderer(WebUrls(), CatalogLinks(lambda _source: [], tmp_path), lambda p: NOTES.get(p))


def test_wikilinks_aliases_headings_and_dangling(tmp_path: Path) -> None:
    html = renderer(tmp_path).render_note("[[A|alias]] [[A#Part one]] [[#Part two]] [[Nowhere]]", "Loop.md")
    assert '<a class="wikilink" href="/notes/A.md" data-path="A.md" rel="noopener noreferrer">alias</a>' in html
    assert 'href="/notes/A.md#part-one"' in html and ">A › Part one<" in html
    assert 'href="/notes/Loop.md#part-two"' in html
    assert '<span class="wikilink dangling" title="Note introuvable">Nowhere</span>' in html


def test_embeds_of_sections_and_images_stop_at_depth(tmp_path: Path) -> None:
    html = renderer(tmp_path).render_note("![[Loop]]\n\n![[img.png|120]]", "Top.md")
    assert html.count('class="embed"') == 3  # Loop, then inside it Loop again and A#Part two; no deeper
    assert "text two" in html and "text one" not in html
    assert '<img class="embed-image" src="/vault-files/img.png" alt="img.png" width="120">' in html
    assert not html.startswith("<p><div")  # a paragraph holding only an embed loses its <p>


def test_callouts_tasks_tables_and_mermaid(tmp_path: Path) -> None:
    text = "> [!warning] Attention\n> corps\n\n- [x] fait\n- [ ] à faire\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    text += "```mermaid\nflowchart LR\n  A --> B\n```\n"
    html = renderer(tmp_path).render_note(text, "x.md")
    assert '<blockquote class="callout callout-warning"' in html
    assert '<div class="callout-title">Attention</div>' in html
    assert 'checked="checked" type="checkbox" disabled="disabled"> fait' in html
    assert "<table>" in html and '<pre class="mermaid">flowchart LR\n  A --&gt; B\n</pre>' in html


def test_answers_link_their_citations_and_drop_ids(tmp_path: Path) -> None:
    sources = [Source(n=1, title="A", path="A.md", heading="A > Part one"), Source(n=2, title="W", url="https://w.org")]
    html = renderer(tmp_path).render_answer("Oui [1], et [2]; pas [3]. <b id='thread-id'>x</b>", sources)
    assert '<a class="cite" href="/notes/A.md#part-one" title="A" rel="noopener noreferrer">[1]</a>' in html
    assert 'href="https://w.org"' in html and "[3]" in html and "id=" not in html


def test_sanitize_and_helpers() -> None:
    dirty = '<img src="http://x/t.png" onerror="a()"><a href="javascript:x()">l</a><iframe src="/"></iframe>'
    assert sanitize(dirty) == '<img><a rel="noopener noreferrer">l</a>'
    assert heading_slug("Durée et planning !") == "durée-et-planning"
    assert section("# T\n## X\nx\n## Y\ny", "x").strip() == "x"


def test_links_on_disk_follow_the_vault_walk(tmp_path: Path) -> None:
    for rel in ("Templates/Modèle.md", "Notes/Modèle.md", ".trash/Vieux.md", "Notes/Vieux.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x", encoding="utf-8")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.md"
    outside.write_text("secret", encoding="utf-8")
    (tmp_path / "Dehors.md").symlink_to(outside)
    links = CatalogLinks(lambda _source: [], tmp_path, exclude=["Templates/"])
    assert links("Modèle", "Ailleurs/x.md") == "Notes/Modèle.md"  # the excluded copy is not a candidate
    assert links("Vieux", "Ailleurs/x.md") == "Notes/Vieux.md"  # nor a dot-folder's
    assert links("Dehors", "x.md") is None  # nor a symlink leading out of the vault
