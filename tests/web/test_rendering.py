"""Obsidian Markdown rendering: wikilinks, embeds, callouts, citations, sanitising."""

from __future__ import annotations

from pathlib import Path

import pytest

from services import vault
from services.catalog import Catalog
from services.catalog.models import NoteRecord, ResolvedLink, Source
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


def test_the_catalogs_dangling_note_links_are_not_looked_for_again_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A view walked the whole vault for each dangling link: 1.9 s at 50,000 notes (#34)."""
    (tmp_path / "Notes").mkdir()
    for name in ("Ici.md", "Nulle part.md", "schema.svg"):  # « Nulle part » created after the catalog's verdict
        (tmp_path / "Notes" / name).write_text("x", encoding="utf-8")
    recorded = [
        ResolvedLink(source="a.md", position=i, target=target, target_path=path)
        for i, (target, path) in enumerate([("Nulle part", None), ("Ici", "Notes/Ici.md"), ("schema.svg", None)])
    ]
    walks, walk = [], vault.walk_vault
    monkeypatch.setattr(vault, "walk_vault", lambda *args, **kwargs: walks.append(1) or walk(*args, **kwargs))
    links = CatalogLinks(lambda source: recorded if source == "a.md" else [], tmp_path)
    assert links("Nulle part", "a.md") is None and links("Ici", "a.md") == "Notes/Ici.md" and walks == []
    assert links("schema.svg", "a.md") == "Notes/schema.svg" and walks == [1]  # a file the catalog does not list
    assert links("Nulle part", "new.md") == "Notes/Nulle part.md"  # a note not indexed yet: its links on disk


def test_links_the_catalog_has_not_seen_are_resolved_by_its_rules_then_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer's [[link]] (no source note) took the vault's walk too: the catalog resolves it by name."""
    (tmp_path / "vault" / "Notes").mkdir(parents=True)
    (tmp_path / "vault" / "Notes" / "Frais.md").write_text("x", encoding="utf-8")  # saved, not indexed yet
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    catalog.upsert_note(NoteRecord(path="Notes/Ici.md", title="Ici", aliases=["Là-bas"]))
    walks, walk = [], vault.walk_vault
    monkeypatch.setattr(vault, "walk_vault", lambda *args, **kwargs: walks.append(1) or walk(*args, **kwargs))
    links = CatalogLinks(lambda _source: [], tmp_path / "vault", named=catalog.resolve_link)
    assert links("Ici", "") == links("Là-bas", "") == "Notes/Ici.md" and links("Nulle part", "") is None
    assert walks == []  # an answer's links: the catalog's verdict
    assert links("Frais", "Notes/Neuve.md") == "Notes/Frais.md" and walks == [1]  # a fresh note's: on disk too
    catalog.close()
