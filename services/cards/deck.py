"""Card files under ``obsirag/cards/``, in the format the Obsidian Spaced Repetition plugin reads: ``question::answer``
on one line, or question lines, a ``?`` line and answer lines; cards apart by a blank line. Each answer ends with a
link to its source (``[[Note#Heading|Note]]``). A user's edits are read back, never overwritten: new cards are
appended."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from services.vault import split_frontmatter
from services.vault.artifacts import GENERATED_ROOT, append_to_artifact, create_numbered, render_frontmatter, slugify

FOLDER = "cards"
_SOURCE = re.compile(r"\s*\[\[(?P<path>[^\]|#]+)(?:#(?P<heading>[^\]|]*))?(?:\|[^\]]*)?\]\]\s*$")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Card:
    question: str
    answer: str  # without its source link
    source: str  # the note's vault path
    heading: str = ""  # the section it comes from ("" : the note)

    @property
    def id(self) -> str:
        """Stable while the question and its note are: a card's review state follows it across edits of the answer."""
        return hashlib.sha1(f"{self.source}\0{normalized(self.question)}".encode()).hexdigest()[:16]

    def markdown(self) -> str:
        title = self.source.rsplit("/", 1)[-1].removesuffix(".md")
        target = self.source.removesuffix(".md") + (f"#{self.heading}" if self.heading else "")
        link = f"[[{target}|{title}]]"
        if "\n" in self.question or "\n" in self.answer:
            return f"{self.question}\n?\n{self.answer}\n{link}"
        return f"{self.question}::{self.answer} {link}"


def normalized(text: str) -> str:
    return _SPACES.sub(" ", text).strip().casefold().rstrip(" ?")


def parse_cards(text: str, default_source: str) -> list[Card]:
    """The cards of a card file (the user's own included): one per ``::`` line, one per ``?`` block."""
    _meta, _error, body = split_frontmatter(text)
    cards = []
    for block in re.split(r"\n\s*\n", body):
        lines = [line for line in block.strip().splitlines() if line.strip() and not line.startswith("#flashcards")]
        if "?" in (line.strip() for line in lines):
            at = [line.strip() for line in lines].index("?")
            question, answer = "\n".join(lines[:at]).strip(), "\n".join(lines[at + 1 :]).strip()
            if question and answer:
                cards.append(_card(question, answer, default_source))
            continue
        for line in lines:
            if "::" in line:
                question, answer = line.split("::", 1)
                if question.strip() and answer.strip():
                    cards.append(_card(question.strip(), answer.strip(), default_source))
    return cards


def _card(question: str, answer: str, default_source: str) -> Card:
    link = _SOURCE.search(answer)
    if link is None:
        return Card(question, answer, default_source)
    source = link["path"].strip() + ("" if link["path"].strip().endswith(".md") else ".md")
    return Card(question, answer[: link.start()].rstrip(), source, (link["heading"] or "").strip())


def deck_files(vault: Path) -> list[Path]:
    root = vault / GENERATED_ROOT / FOLDER
    return sorted(root.glob("*.md")) if root.is_dir() else []


def deck_of(vault: Path, note: str) -> Path | None:
    """The card file of ``note`` (its frontmatter's ``source``), when there is one."""
    wanted = f"[[{note.removesuffix('.md')}]]"
    for path in deck_files(vault):
        meta, _error, _body = split_frontmatter(path.read_text(encoding="utf-8"))
        if meta.get("source") == wanted:
            return path
    return None


def add_cards(vault: Path, note: str, title: str, cards: list[Card], today: str) -> Path | None:
    """Append ``cards`` to the note's card file (created the first time); None when there is nothing to add."""
    if not cards:
        return deck_of(vault, note)
    text = "\n\n".join(card.markdown() for card in cards)
    existing = deck_of(vault, note)
    if existing is not None:
        append_to_artifact(vault, existing, text)
        return existing
    meta = {"title": f"Cartes — {title}", "source": f"[[{note.removesuffix('.md')}]]", "tags": ["flashcards"]}
    content = render_frontmatter({**meta, "created": today}) + "#flashcards\n\n" + text + "\n"
    return create_numbered(vault, f"{FOLDER}/{slugify(title) or 'cartes'}", content)
