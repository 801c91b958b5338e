"""What a note says about itself beside its text: the context embedded with each of its chunks, and the
text of its note vector.

A chunk cut out of a note loses what the note is about ("Besoin de barrer du texte ?" says nothing of
HTML), and a question seldom names a passage: it names the note's topic, often in other words. A note's
aliases are those other words (in a French vault, often the English name: "Templates" for « Modèles »),
its ``description`` is its own summary. So each chunk is embedded after its title and heading path (as
before) and, when the note has them, a line of its aliases and description; a note with neither embeds
exactly the text it did before. The note vector (the store's ``title`` vector, the same on every chunk of a
note) reads the title, aliases, description and headings: a paraphrase of the note's topic meets it there
(docs/performance.md, "Paraphrased questions").
"""

from __future__ import annotations

from services.vault.models import ParsedNote

DESCRIPTION_FIELDS = ("description", "summary")  # frontmatter keys a note summarises itself with
CONTEXT_MAX_CHARS = 240  # the chunk's context line: a long description must not eat the chunk's budget
SUMMARY_MAX_CHARS = 1200  # the note vector's text (~300 tokens: every heading of a long note fits)
SUMMARY_HEADING_LEVEL = 3  # deeper headings are details (a function's name), not the note's topics


def description(note: ParsedNote) -> str:
    """The note's own summary from its frontmatter (``description`` or ``summary``), one line, or ""."""
    for key in DESCRIPTION_FIELDS:
        value = note.frontmatter.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return ""


def _aliases(note: ParsedNote) -> list[str]:
    title = note.title.strip().casefold()
    return [alias.strip() for alias in note.aliases if alias.strip() and alias.strip().casefold() != title]


def chunk_context(note: ParsedNote) -> str:
    """The line embedded after a chunk's title and headings: aliases, then description ("" without either)."""
    parts = [", ".join(_aliases(note)), description(note)]
    line = ". ".join(part for part in parts if part)
    return line if len(line) <= CONTEXT_MAX_CHARS else line[: CONTEXT_MAX_CHARS - 1].rstrip() + "…"


def note_summary(note: ParsedNote) -> str:
    """The note vector's text: title, aliases, description and headings, one line each (the title alone for
    a note with none of them)."""
    title = note.title.strip()
    headings = [
        " ".join(h.text.split())
        for h in note.headings
        if h.level <= SUMMARY_HEADING_LEVEL and h.text.strip() and h.text.strip().casefold() != title.casefold()
    ]
    lines = [title, ", ".join(_aliases(note)), description(note), " ; ".join(dict.fromkeys(headings))]
    summary = "\n".join(line for line in lines if line)
    return summary if len(summary) <= SUMMARY_MAX_CHARS else summary[: SUMMARY_MAX_CHARS - 1].rstrip() + "…"
