"""The one Markdown reader: a note body parsed once, with markdown-it, into a ``MarkdownDoc``.

The parser is CommonMark (tables, strikethrough, task lists, footnotes, raw HTML) plus one plugin for
Obsidian's own syntax, shared by everyone who reads Markdown: ``[[wikilinks]]`` and ``![[embeds]]``
(token ``wikilink``, its ``WikiLink`` in ``meta["link"]``, also in a table cell with an unescaped ``|``),
``#tags`` (token ``tag``), ``^block-ids`` at a line end (token ``block_id``, the text before it trimmed)
and ``> [!kind] Title`` callouts (the title an inline token between ``callout_title_open``/``_close``).
Code spans, fenced and indented code blocks and raw HTML hide what they hold.

``MarkdownDoc`` gives the vault parser its headings, links, tags and block ids, the chunker its sections
and code lines, and entity cleaning its plain text; the web renderer builds on ``obsidian_parser()``.
Headings are the ATX headings at the top level (not inside a list or quote), as Obsidian's outline shows.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock, table
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.tasklists import tasklists_plugin

from services.vault.syntax import Heading, WikiLink

NOTE_SUFFIX = ".md"
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")
# Obsidian: a tag starts after whitespace, the start or some punctuation (not "/" or "&", so URLs and
# HTML entities stay out) and holds letters, digits, "_", "-" and "/" (combining accents too: NFD text).
_TAG = re.compile(r"#((?:[\w/-]|[\u0300-\u036f])+)")
_TAG_AFTER = frozenset("([{,;:!?«“‘>*~|")
_BLOCK_ID = re.compile(r"\^([A-Za-z0-9-]+)[ \t]*(?=\n|$)")
_CALLOUT = re.compile(r"^\[!(?P<kind>[\w-]+)\](?P<fold>[+-]?)[ \t]*(?P<title>[^\n]*)\n?")
_WIKILINK_WITH_PIPE = re.compile(r"\[\[[^\[\]\n]*\|[^\[\]\n]*\]\]")
_PIPE_STAND_IN = "\ue000"  # a private-use character: same length as "|", never a cell separator
_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_CODE_BLOCKS = ("fence", "code_block")


# --- the Obsidian plugin ------------------------------------------------------------------------


def obsidian_plugin(md: MarkdownIt) -> None:
    """Wikilinks, embeds, tags, block ids and callouts (see the module docstring)."""
    md.block.ruler.at("table", _table_rule, {"alt": ["paragraph", "reference"]})
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.inline.ruler.before("link", "tag", _tag_rule)
    md.inline.ruler.before("link", "block_id", _block_id_rule)
    md.core.ruler.before("inline", "callouts", _callout_rule)
    md.core.ruler.after("inline", "heading_text", _heading_text_rule)


def obsidian_parser() -> MarkdownIt:
    """A fresh parser with the reader's rules; the renderer adds its own render rules to one."""
    md = MarkdownIt("commonmark", {"html": True, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    return md.use(tasklists_plugin).use(footnote_plugin).use(obsidian_plugin)


def wikilink(inner: str, embed: bool = False) -> WikiLink | None:
    """The link written ``[[inner]]`` (``![[inner]]`` when ``embed``); None when it names nothing."""
    target, _, alias = inner.partition("|")
    target, _, subpath = target.rstrip("\\").partition("#")  # tables escape the pipe: [[a\|b]]
    return _link(target, subpath, alias, embed)


def markdown_link(text: str, dest: str, embed: bool = False) -> WikiLink | None:
    """A ``[text](dest)`` link when it points at a note in the vault (a relative ``.md`` path)."""
    dest = dest.removeprefix("<").removesuffix(">")
    path, _, fragment = dest.partition("#")
    path = unquote(path)
    if _URL_SCHEME.match(dest) or not path.lower().endswith(NOTE_SUFFIX):
        return None
    return _link(path, unquote(fragment), text, embed)


def _link(target: str, subpath: str, alias: str, embed: bool) -> WikiLink | None:
    target, subpath = target.strip(), subpath.strip()
    if target.lower().endswith(NOTE_SUFFIX):
        target = target[: -len(NOTE_SUFFIX)]
    if not target and not subpath:
        return None
    block = subpath[1:] if subpath.startswith("^") else None
    heading = None if block is not None else subpath
    return WikiLink(
        target=target, heading=heading or None, block=block or None, alias=alias.strip() or None, embed=embed
    )


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    match = _WIKILINK.match(state.src, state.pos) if state.src[state.pos] in "![" else None
    if match is None:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.content = match[0]
        token.meta = {"inner": match[2], "embed": bool(match[1]), "link": wikilink(match[2], bool(match[1]))}
    state.pos = match.end()
    return True


@lru_cache(maxsize=8)
def _hide_wikilink_pipes(src: str) -> str | None:
    """``src`` with the ``|`` of every ``[[target|alias]]`` stood in for; None when there is none."""
    if "[[" not in src:
        return None
    hidden, count = _WIKILINK_WITH_PIPE.subn(lambda m: m[0].replace("|", _PIPE_STAND_IN), src)
    return hidden if count else None


def _table_rule(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """CommonMark's table, except that ``[[target|alias]]`` in a cell is one link, as Obsidian reads it."""
    src, hidden = state.src, _hide_wikilink_pipes(state.src)
    if hidden is None:
        return table(state, start, end, silent)
    first = len(state.tokens)
    state.src = hidden  # same length: every offset and line mark stays true
    try:
        found = table(state, start, end, silent)
    finally:
        state.src = src
    for token in state.tokens[first:]:
        if token.type == "inline":
            token.content = token.content.replace(_PIPE_STAND_IN, "|")
    return found


def _starts_word(state: StateInline) -> bool:
    before = state.src[state.pos - 1] if state.pos else " "
    return before.isspace() or before in _TAG_AFTER


def _tag_rule(state: StateInline, silent: bool) -> bool:
    if state.src[state.pos] != "#" or not _starts_word(state):
        return False
    match = _TAG.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        token = state.push("tag", "", 0)
        token.content = unicodedata.normalize("NFC", match[1])
    state.pos = match.end()
    return True


def _block_id_rule(state: StateInline, silent: bool) -> bool:
    if state.src[state.pos] != "^" or not (state.pos == 0 or state.src[state.pos - 1].isspace()):
        return False
    match = _BLOCK_ID.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        state.pending = state.pending.rstrip(" \t")  # "Real ^blk" reads "Real"
        token = state.push("block_id", "", 0)
        token.content = match[1]
        token.meta = {"start": state.pos}
    state.pos = match.end()
    return True


def _callout_rule(state: StateCore) -> None:
    """``> [!kind] Title``: the quote gets ``callout`` classes, the title its own inline token (links and
    tags in it count), and the marker goes. A callout without a title shows its kind (``meta["kind_only"]``)."""
    tokens, i = state.tokens, 0
    while i < len(tokens) - 2:
        token, inline = tokens[i], tokens[i + 2]
        match = _CALLOUT.match(inline.content) if token.type == "blockquote_open" else None
        if match is None or tokens[i + 1].type != "paragraph_open":
            i += 1
            continue
        kind, written = match["kind"].lower(), match["title"].strip()
        token.attrSet("class", f"callout callout-{kind}")
        token.attrSet("data-callout", kind)
        inline.content = inline.content[match.end() :]
        line = inline.map[0] if inline.map else 0
        if inline.map and match[0].endswith("\n"):
            inline.map = [line + 1, inline.map[1]]  # the body starts on the next line
        title = Token("inline", "", 0, content=written or kind.capitalize(), map=[line, line + 1], children=[])
        title.meta = {"kind_only": not written}
        tokens[i + 1 : i + 1] = [Token("callout_title_open", "div", 1), title, Token("callout_title_close", "div", -1)]
        if not inline.content.strip():
            tokens[i + 4].hidden = tokens[i + 6].hidden = True  # only a title: no empty <p>
        i += 5


def _heading_text_rule(state: StateCore) -> None:
    """Each heading's text as written, without its block id, in ``heading_open.meta["text"]``."""
    for i, token in enumerate(state.tokens):
        if token.type == "heading_open":
            inline = state.tokens[i + 1]
            ids = [c for c in inline.children or [] if c.type == "block_id"]
            text = inline.content[: ids[-1].meta["start"]] if ids else inline.content
            token.meta["text"] = text.strip()


# --- the parsed note ----------------------------------------------------------------------------

_PARSER = obsidian_parser()


@dataclass
class Section:
    """The lines under one heading (its own line left out), with the headings above it, outermost first."""

    heading_path: list[str]
    lines: list[str] = field(default_factory=list)
    code: list[bool] = field(default_factory=list)  # per line: inside a code block, fences included


@dataclass
class MarkdownDoc:
    """One body, parsed. Line numbers are 0-based within ``body`` (lines split at ``\\n``)."""

    body: str
    tokens: list[Token]

    @cached_property
    def lines(self) -> list[str]:
        return self.body.split("\n")

    @cached_property
    def _inline(self) -> list[Token]:
        """Every inline child token, in document order."""
        return [child for token in self.tokens if token.type == "inline" for child in token.children or []]

    @cached_property
    def headings(self) -> list[Heading]:
        """Top-level ATX headings with text (block ids left out)."""
        return [Heading(level=level, text=text, line=line) for level, text, line in self._atx() if text]

    def _atx(self) -> Iterator[tuple[int, str, int]]:
        for token in self.tokens:
            if token.type == "heading_open" and token.level == 0 and token.markup.startswith("#") and token.map:
                yield int(token.tag[1]), token.meta["text"], token.map[0]

    @cached_property
    def links(self) -> list[WikiLink]:
        """Wikilinks, embeds and Markdown links (and images) to ``.md`` files, in order, outside code."""
        found: list[WikiLink | None] = []
        children = self._inline
        for i, token in enumerate(children):
            if token.type == "wikilink":
                found.append(token.meta["link"])
            elif token.type == "link_open":
                found.append(markdown_link(_link_text(children, i), str(token.attrGet("href") or "")))
            elif token.type == "image":
                found.append(markdown_link(token.content, str(token.attrGet("src") or ""), embed=True))
        return [link for link in found if link is not None]

    @cached_property
    def tags(self) -> list[str]:
        """Inline ``#tags`` (without ``#``, NFC), in order, repeats kept."""
        return [token.content for token in self._inline if token.type == "tag"]

    @cached_property
    def block_ids(self) -> list[str]:
        return [token.content for token in self._inline if token.type == "block_id"]

    @cached_property
    def lines_without_ids(self) -> list[str]:
        """``lines`` with each ``^block-id`` marker (and the spaces before it) cut off its line end."""
        lines = list(self.lines)
        for token in self.tokens:
            if token.type != "inline" or not token.map:
                continue
            for child in token.children or []:
                if child.type == "block_id":  # inline content keeps the block's line breaks
                    number = token.map[0] + token.content[: child.meta["start"]].count("\n")
                    line = lines[number].rstrip()
                    if line.endswith("^" + child.content):  # not in a table row: "| a ^id |" stays whole
                        lines[number] = line[: -len(child.content) - 1].rstrip()
        return lines

    @cached_property
    def code_lines(self) -> list[bool]:
        """Per line of ``body``: inside a fenced or indented code block (fences included)."""
        flags = [False] * len(self.lines)
        for token in self.tokens:
            if token.type in _CODE_BLOCKS and token.map:
                flags[token.map[0] : token.map[1]] = [True] * (token.map[1] - token.map[0])
        return flags

    def sections(self) -> list[Section]:
        """The body cut at its top-level ATX headings, in order; the first section is what precedes them.
        Block id markers are left out of the lines, as out of the headings."""
        cuts = {line: (level, text) for level, text, line in self._atx()}
        sections = [Section([])]
        stack: list[tuple[int, str]] = []
        for number, (line, code) in enumerate(zip(self.lines_without_ids, self.code_lines, strict=True)):
            if number not in cuts:
                sections[-1].lines.append(line)
                sections[-1].code.append(code)
                continue
            level, text = cuts[number]
            stack = [(lvl, txt) for lvl, txt in stack if lvl < level]
            if text:
                stack.append((level, text))
            sections.append(Section([txt for _, txt in stack]))
        return sections

    def text_lines(self) -> Iterator[str]:
        """Plain text outside code, one item per line and per table cell: a link reads as its label (an
        alias, else the target's name), tags, block ids, inline code and HTML are left out."""
        for token in self.tokens:
            if token.type == "inline" and not token.meta.get("kind_only"):
                yield from _plain_lines(token.children or [])


def _link_text(children: Sequence[Token], start: int) -> str:
    parts = []
    for token in children[start + 1 :]:
        if token.type == "link_close":
            break
        parts.append(token.content if token.type in ("text", "code_inline") else "")
    return "".join(parts)


def _plain_lines(children: Sequence[Token]) -> Iterator[str]:
    line: list[str] = []
    for token in children:
        if token.type in ("softbreak", "hardbreak"):
            yield "".join(line)
            line = []
        elif token.type in ("text", "image"):  # an image reads as its alt text
            line.append(token.content)
        elif token.type == "wikilink":
            link: WikiLink | None = token.meta["link"]
            line.append((link.alias or posixpath.basename(link.target)) if link else "")
        elif token.type in ("code_inline", "html_inline", "tag"):
            line.append(" ")
    yield "".join(line)


def read_markdown(body: str) -> MarkdownDoc:
    """Parse ``body`` (a note without its frontmatter) once."""
    return MarkdownDoc(body=body, tokens=_PARSER.parse(body))
