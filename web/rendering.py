"""Obsidian Markdown → safe HTML for the note viewer and the chat answers.

markdown-it (CommonMark + tables, strikethrough, task lists, footnotes) plus Obsidian's own syntax:
``[[wikilinks]]`` (aliases, ``#heading`` targets), ``![[embeds]]`` of notes, sections and images,
``> [!note]`` callouts, ``^block-ids`` and ```` ```mermaid ```` blocks (drawn by the browser). Raw HTML in a
note is allowed through markdown-it, then everything goes through ``nh3``: no script, no event handler
attribute, no ``javascript:`` URL, no image from outside ObsiRAG, whatever the note contains.

The Obsidian syntax is read by ``services.vault.reader``'s plugin, the same rules the index uses. Where links
point is the caller's business: a ``LinkUrls`` given by the web app (``web.urls.WebUrls``) turns vault
paths into URLs and a resolver turns a link target into a vault path (``CatalogLinks`` uses the catalog's
resolved links, else the files ``vault.walk_vault`` lists).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote

import nh3
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from services import vault
from services.catalog.models import Source
from services.vault import reader
from services.vault.addresses import heading_slug, section
from services.vault.links import LinkResolver
from services.vault.reader import MarkdownDoc
from services.vault.syntax import WikiLink

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".bmp", ".avif")
MAX_EMBED_DEPTH = 2  # an embed inside an embed is rendered, one level deeper is a link (no cycles)
_CITATION = re.compile(r"\[(\d{1,2})\](?!\()")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_SAFE_ID = re.compile(r"^[\w-]{1,80}$")
_FILE_SUFFIX = re.compile(r"\.(?!md$)[A-Za-z0-9]{1,8}$", re.IGNORECASE)  # a link to a file, not to a note

_TAGS = nh3.ALLOWED_TAGS | {"input", "section", "mark", "figure", "figcaption", "details", "summary"}
_ATTRIBUTES: dict[str, set[str]] = {
    **{tag: set(attrs) for tag, attrs in nh3.ALLOWED_ATTRIBUTES.items()},
    "*": {"class", "id", "title", "data-callout"},
    "a": {"href", "hreflang", "data-path"},
    "input": {"type", "checked"},
    "ol": {"start"},
}


class LinkUrls(Protocol):
    """Where the app shows a note (``heading``: its anchor) and serves a vault file."""

    def note(self, path: str, heading: str | None = None) -> str: ...

    def file(self, path: str) -> str: ...

    def source(self, path: str, heading: str | None = None, page: int | None = None) -> str:
        """Where a cited source opens: a note at its heading, a document at its page."""
        ...

    def is_file(self, url: str) -> bool:
        """Whether ``url`` is one of ``file``'s: the only images a page may load."""
        ...


Resolver = Callable[[str, str], str | None]  # (link target as written, source note path) -> vault path
Reader = Callable[[str], str | MarkdownDoc | None]  # vault path -> body (parsed or not), None when unreadable


@dataclass
class _Env:
    """Per-render state handed to markdown-it's rules through ``env``."""

    source: str
    depth: int = 0
    sources: dict[int, Source] = field(default_factory=dict)


class MarkdownRenderer:
    """Renders notes and answers; one instance per app (markdown-it parsers are reusable)."""

    def __init__(self, urls: LinkUrls, resolve: Resolver, read_body: Reader) -> None:
        self.urls = urls
        self.resolve = resolve
        self.read_body = read_body
        self._md = _parser(self)

    def render_note(self, body: str | MarkdownDoc, path: str, depth: int = 0) -> str:
        """Sanitised HTML of a note body (frontmatter already removed); a ``MarkdownDoc`` (``note.markdown``)
        is rendered from its tokens, without parsing the note again."""
        return sanitize(self._html(body, path, depth), local_file=self.urls.is_file)

    def _html(self, body: str | MarkdownDoc, path: str, depth: int) -> str:
        env = _Env(source=path, depth=depth).__dict__
        if isinstance(body, str):
            return self._md.render(body, env)
        _mark_blocks(body.tokens)
        return self._md.renderer.render(body.tokens, self._md.options, env)

    def render_answer(self, text: str, sources: Sequence[Source] = ()) -> str:
        """Sanitised HTML of a chat answer; ``[n]`` citations link to their source."""
        env = _Env(source="", depth=MAX_EMBED_DEPTH, sources={s.n: s for s in sources})
        return sanitize(self._md.render(text, env.__dict__), keep_ids=False, local_file=self.urls.is_file)

    # --- pieces used by the markdown-it rules ---------------------------------------------------

    def wikilink_html(self, link: WikiLink | None, inner: str, embed: bool, env: dict[str, Any]) -> str:
        if link is None:
            return escape(f"[[{inner}]]")
        source = env["source"]
        target = self.resolve(link.target, source) if link.target else source or None
        label = link.alias or (f"{link.target} › {link.heading}" if link.heading and link.target else None)
        label = label or link.heading or link.target
        if target is None:
            return f'<span class="wikilink dangling" title="Note introuvable">{escape(label)}</span>'
        if not target.lower().endswith(".md"):
            return self._file_html(target, link.alias, embed)
        if embed and env["depth"] < MAX_EMBED_DEPTH:
            return self._embed_html(target, link.heading, env["depth"] + 1)
        href = self.urls.note(target, link.heading)
        return f'<a class="wikilink" href="{escape(href)}" data-path="{escape(target)}">{escape(label)}</a>'

    def _file_html(self, path: str, alias: str | None, embed: bool) -> str:
        url = escape(self.urls.file(path))
        name = escape(posixpath.basename(path))
        if embed and path.lower().endswith(IMAGE_SUFFIXES):
            width = f' width="{alias}"' if alias and alias.isdigit() else ""
            return f'<img class="embed-image" src="{url}" alt="{name}"{width}>'
        return f'<a class="wikilink file" href="{url}">{escape(alias or name)}</a>'

    def _embed_html(self, path: str, heading: str | None, depth: int) -> str:
        body = self.read_body(path)
        if body is None:
            return f'<span class="wikilink dangling">{escape(path)}</span>'
        if heading:
            body = section(body, heading)
        inner = self._html(body, path, depth)
        title = posixpath.basename(path).removesuffix(".md") + (f" › {heading}" if heading else "")
        href = escape(self.urls.note(path, heading))
        return (
            f'<div class="embed"><div class="embed-title"><a href="{href}" data-path="{escape(path)}">'
            f"{escape(title)}</a></div>{inner}</div>"
        )

    def rewrite_url(self, url: str, source: str, image: bool) -> str:
        """Relative Markdown links and images point at the vault: give them ObsiRAG URLs."""
        if not url or url.startswith("#") or _SCHEME.match(url):
            return url
        path, _, fragment = unquote(url).partition("#")
        target = posixpath.normpath(posixpath.join(posixpath.dirname(source), path)) if source else path
        if target.startswith("../") or target == "..":
            return ""
        if path.lower().endswith(".md") and not image:
            resolved = self.resolve(path.removesuffix(".md"), source) or target
            return self.urls.note(resolved, fragment or None)
        return self.urls.file(self.resolve(path, source) or target)

    def citation_html(self, n: int, env: dict[str, Any]) -> str | None:
        source: Source | None = env["sources"].get(n)
        if source is None:
            return None
        # where the source list's link opens: a PDF at its page, never a note URL for a non-note
        heading = source.heading.split(" > ")[-1] or None
        href = source.url or self.urls.source(source.path or "", heading, source.page)
        return f'<a class="cite" href="{escape(href)}" title="{escape(source.title)}">[{n}]</a>'


def sanitize(html: str, keep_ids: bool = True, local_file: Callable[[str], bool] = lambda _url: False) -> str:
    """Only harmless tags and attributes, ``http(s)``/``mailto``/``obsidian`` links, and images only where
    ``local_file`` says the URL is the vault's own (none by default)."""

    def keep(tag: str, attribute: str, value: str) -> str | None:
        if attribute == "id" and not (keep_ids and _SAFE_ID.match(value)):
            return None
        if tag == "img" and attribute == "src" and not local_file(value):
            return None  # only the vault's own files: remote images would leak reads and break the CSP
        if tag == "input" and attribute == "type" and value != "checkbox":
            return None
        return value

    return nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        attribute_filter=keep,
        url_schemes={"http", "https", "mailto", "obsidian"},
        set_tag_attribute_values={"input": {"disabled": "disabled"}},
        clean_content_tags={"script", "style"},
    )


# --- markdown-it wiring ------------------------------------------------------------------------


def _parser(renderer: MarkdownRenderer) -> MarkdownIt:
    md = reader.obsidian_parser()
    md.inline.ruler.before("link", "citation", _citation_rule(renderer))
    md.core.ruler.after("heading_text", "obsidian_blocks", lambda state: _mark_blocks(state.tokens))
    md.add_render_rule("wikilink", lambda _r, tokens, i, _o, env: renderer.wikilink_html(**tokens[i].meta, env=env))
    md.add_render_rule("citation", lambda _r, tokens, i, _o, _env: tokens[i].content)
    md.add_render_rule("tag", lambda _r, tokens, i, _o, _env: escape(f"#{tokens[i].content}"))
    md.add_render_rule("block_id", lambda *_args: "")
    md.add_render_rule("callout_title_open", lambda *_args: '<div class="callout-title">')
    md.add_render_rule("callout_title_close", lambda *_args: "</div>\n")
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("link_open", _url_rule(renderer, "href", image=False))
    md.add_render_rule("image", _url_rule(renderer, "src", image=True))
    return md


def _citation_rule(renderer: MarkdownRenderer) -> Callable[[StateInline, bool], bool]:
    def rule(state: StateInline, silent: bool) -> bool:
        sources = state.env.get("sources")
        match = _CITATION.match(state.src, state.pos) if sources else None
        if match is None or int(match[1]) not in sources:
            return False
        if not silent:
            state.push("citation", "", 0).content = renderer.citation_html(int(match[1]), state.env) or ""
        state.pos = match.end()
        return True

    return rule


def _mark_blocks(tokens: Sequence[Token]) -> None:
    """Heading ids (from the text without its block id), and a paragraph holding only an embed loses its ``<p>``."""
    seen: dict[str, int] = {}
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            slug = heading_slug(token.meta["text"])
            seen[slug] = seen.get(slug, 0) + 1
            token.attrSet("id", slug if seen[slug] == 1 else f"{slug}-{seen[slug]}")
        elif token.type == "inline" and token.children:
            kids = [c for c in token.children if not (c.type == "text" and not c.content.strip())]
            lone_embed = len(kids) == 1 and kids[0].type == "wikilink" and kids[0].meta["embed"]
            if lone_embed and i and tokens[i - 1].type == "paragraph_open":
                tokens[i - 1].hidden = tokens[i + 1].hidden = True


def _render_fence(_self: RendererHTML, tokens: Sequence[Token], idx: int, *_args: Any) -> str:
    token = tokens[idx]
    language = token.info.strip().split(" ")[0].lower() if token.info else ""
    code = escape(token.content)
    if language == "mermaid":
        return f'<div class="mermaid-block"><pre class="mermaid">{code}</pre></div>\n'
    css = f' class="language-{escape(language)}"' if language else ""
    return f"<pre><code{css}>{code}</code></pre>\n"


def _url_rule(renderer: MarkdownRenderer, attribute: str, image: bool) -> Callable[..., str]:
    def rule(self: RendererHTML, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
        token = tokens[idx]
        url = str(token.attrGet(attribute) or "")
        token.attrSet(attribute, renderer.rewrite_url(url, env.get("source", ""), image))
        if image:
            token.attrSet("alt", self.renderInlineAsText(token.children or [], options, env))
        return self.renderToken(tokens, idx, options, env)

    return rule


class CatalogLinks:
    """Resolves a note's links as the indexer did (the catalog's ``target_path``, dangling included), a link
    the catalog has not seen by its rules now (``named``), else with Obsidian's rules over the files
    ``vault.walk_vault`` lists (a note not indexed yet, a file the catalog does not list). The walk lists the
    whole vault: 1.9 s at 50,000 notes, once per view that needs it."""

    def __init__(
        self,
        outlinks: Callable[[str], Sequence[Any]],
        vault_root: Path,
        exclude: Sequence[str] = (),
        named: Callable[[str, str], str | None] | None = None,
    ) -> None:
        self._outlinks = outlinks
        self._named = named  # the catalog's resolution of one link (``LinksTable.resolve_link``)
        self._vault = vault_root
        self._exclude = list(exclude)
        self._known: dict[str, dict[str, str | None]] = {}
        self._disk: LinkResolver | None = None

    def __call__(self, target: str, source: str) -> str | None:
        if source not in self._known:
            self._known[source] = {link.target: link.target_path for link in self._outlinks(source)} if source else {}
        known = self._known[source]
        if known.get(target) or (target in known and not _FILE_SUFFIX.search(target)):
            # The indexer's verdict, dangling included: it re-resolves a note's links when a note they could
            # name comes or goes. Walking the vault instead took 1.9 s a view at 50,000 notes (#34).
            return known[target]
        if self._named is not None:  # a link the catalog has not seen: an answer's, a note's edited since
            found = self._named(target, source)
            if found or (not source and not _FILE_SUFFIX.search(target)):  # an answer cites indexed notes
                return found
        return self._on_disk().resolve(target, source)  # not indexed yet, or a file the catalog does not list

    def _on_disk(self) -> LinkResolver:
        if self._disk is None:
            paths = list(vault.walk_vault(self._vault, self._exclude))
            notes = [p for p in paths if p.lower().endswith(vault.NOTE_SUFFIX)]
            self._disk = LinkResolver(notes, {}, [p for p in paths if not p.lower().endswith(vault.NOTE_SUFFIX)])
        return self._disk
