"""Managed Markdown files under ``obsirag/``: ``Profil.md``, ``Rappels.md``.

A managed file holds sections between ``<!-- obsirag:managed:<name> -->`` and
``<!-- /obsirag:managed:<name> -->``. ObsiRAG rewrites only the inside of those markers: every byte
outside them stays as the user left it, and a rewrite with nothing new leaves the file untouched.

A hand edit that removed one marker of a section is repaired: the missing marker goes back around the
lines ObsiRAG writes there (list items, ``###`` subjects, blank lines, an ``_italic_`` placeholder), so the
lines the user added among them are read back and any other text of theirs stays outside. A section whose
two markers are gone (or out of order) is left out, and ``marker_problems`` says so for the status pages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from services.vault.artifacts import generated_path, render_frontmatter, replace_if_unchanged

_WRITE_ATTEMPTS = 3
_OPEN = "<!-- obsirag:managed:{name} -->"
_CLOSE = "<!-- /obsirag:managed:{name} -->"
_SECTION_LINE = re.compile(r"^\s*(?:[-*+]\s.*|#{3,6}\s.*|\*\*.+\*\*|_.+_)?\s*$")  # what ObsiRAG writes inside


def _markers(name: str) -> re.Pattern[str]:
    opening, closing = re.escape(_OPEN.format(name=name)), re.escape(_CLOSE.format(name=name))
    return re.compile(rf"{opening}(?P<inner>.*?){closing}", re.S)


def _wrap(name: str, inner: str) -> str:
    return f"{_OPEN.format(name=name)}{inner}{_CLOSE.format(name=name)}"


def repaired(text: str, name: str) -> str:
    """``text`` with the section's missing marker put back when only one of its two is left; else as is."""
    opening, closing = _OPEN.format(name=name), _CLOSE.format(name=name)
    if (opening in text) == (closing in text):
        return text
    if opening in text:
        start = text.index(opening) + len(opening)
        end = _section_end(text, start)
        return f"{text[:end]}\n{closing}{text[end:]}"
    end = text.index(closing)
    start = _section_start(text, end)
    return f"{text[:start]}{opening}\n{text[start:]}" if start < end else f"{text[:end]}{opening}\n{text[end:]}"


def _section_end(text: str, start: int) -> int:
    """Where the section opened at ``start`` ends: after its last non-blank line of section content."""
    end, position = start, start
    for line in text[start:].splitlines(keepends=True):
        if "<!--" in line or not _SECTION_LINE.match(line):
            break
        if line.strip():
            end = position + len(line.rstrip("\r\n"))
        position += len(line)
    return end


def _section_start(text: str, end: int) -> int:
    """Where the section closed at ``end`` starts: at its first non-blank line of section content."""
    line_start = text.rfind("\n", 0, end) + 1
    start = end if text[line_start:end].strip() == "" else line_start
    lines = text[:line_start].splitlines(keepends=True)
    position = line_start
    for line in reversed(lines):
        position -= len(line)
        if "<!--" in line or not _SECTION_LINE.match(line):
            break
        if line.strip():
            start = position
    return start


def marker_problem(text: str, name: str) -> str | None:
    """What is wrong with a section's markers: "repairable" (one is missing), "missing" (both are, or they
    are out of order: ObsiRAG leaves the section out), or None."""
    has_open, has_close = _OPEN.format(name=name) in text, _CLOSE.format(name=name) in text
    if has_open != has_close:
        return "repairable"
    return None if has_open and _markers(name).search(text) else "missing"


@dataclass
class ManagedFile:
    """One file under ``obsirag/`` whose managed sections ObsiRAG owns (and nothing else)."""

    path: Path
    title: str
    note_type: str
    headings: dict[str, str] = field(default_factory=dict)  # section → its heading in a new file
    intro: str = ""  # the paragraph under the title of a new file

    def text(self) -> str | None:
        try:
            return self.path.read_bytes().decode("utf-8")  # bytes: "\r\n" stays "\r\n"
        except FileNotFoundError:
            return None

    def section(self, name: str, text: str | None = None) -> str | None:
        """The inside of a section as it is in the file (one lost marker repaired), markers excluded; None
        when absent."""
        text = self.text() if text is None else text
        match = _markers(name).search(repaired(text or "", name))
        return match["inner"] if match else None

    def write(self, sections: dict[str, str]) -> bool:
        """Put each section's content inside its markers; True when the file changed."""
        for _ in range(_WRITE_ATTEMPTS):
            before = self.text()
            after = self._render(before, sections)
            if after == before:
                return False
            if replace_if_unchanged(self.path, None if before is None else before.encode("utf-8"), after):
                return True
        raise RuntimeError(f"{self.path} kept changing while it was being updated")

    def _render(self, before: str | None, sections: dict[str, str]) -> str:
        if before is None:
            before = self._template(list(sections))
        for name, content in sections.items():
            inner = "\n" + content.strip("\n") + "\n"
            before = repaired(before, name)
            before = _markers(name).sub(lambda m, inner=inner, name=name: _wrap(name, inner), before, count=1)
        return before

    def _template(self, names: list[str]) -> str:
        head = render_frontmatter({"title": self.title, "type": self.note_type, "tags": ["obsirag", self.note_type]})
        parts = [f"{head}# {self.title}\n" + (f"\n{self.intro}\n" if self.intro else "")]
        for name in names:
            heading = self.headings.get(name)
            parts.append((f"## {heading}\n\n" if heading else "") + _wrap(name, "\n\n") + "\n")
        return "\n".join(parts)


def managed_file(
    vault_root: Path, relative: str, title: str, note_type: str, headings: dict[str, str] | None = None
) -> ManagedFile:
    return ManagedFile(generated_path(vault_root, relative), title, note_type, headings or {})
