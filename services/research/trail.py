"""A research answer kept as a note: ``obsirag/research/YYYY-MM/<question>_<YYYYMMDD_HHMM>.md`` with the
question, each sub-question and the notes read for it (wikilinks, so the graph links them), the answer and
its sources. Written once, never over a file (``create_numbered``); the watcher indexes it like any note."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from services.catalog.models import Source, Turn
from services.catalog.research_models import SubQuestion
from services.research import prompts
from services.vault.artifacts import create_numbered, render_frontmatter, slugify, wikilink

FOLDER = "research"


class NotResearch(ValueError):
    """The answer has no research trail (not asked in research mode)."""


def save_research(vault: Path, turn: Turn, now: datetime, language: str = "fr") -> Path:
    """Write the research note of ``turn``; its path. ``NotResearch`` for a turn without a trail."""
    if turn.research is None:
        raise NotResearch("this answer was not a research answer")
    local = now.astimezone()
    base = f"{FOLDER}/{local:%Y-%m}/{slugify(turn.question)}_{local:%Y%m%d_%H%M}"
    text = render_research(turn, local, language)
    return create_numbered(vault, base, text)


def render_research(turn: Turn, now: datetime, language: str = "fr") -> str:
    words = _WORDS[language if language in _WORDS else "fr"]
    frontmatter = {
        "title": turn.question,
        "created": now.isoformat(timespec="minutes"),
        "tags": ["research", "obsirag"],
        "type": "research",
        "thread": turn.thread_id,
    }
    lines = [render_frontmatter(frontmatter), f"# {turn.question}", "", f"## {words['subs']}", ""]
    lines += [_sub_line(i, sub, language) for i, sub in enumerate(turn.research or [], start=1)]
    lines += ["", f"## {words['answer']}", "", turn.answer.strip(), ""]
    if turn.sources:
        lines += [f"## {words['sources']}", "", *(_source_line(s) for s in turn.sources), ""]
    return "\n".join(lines)


def _sub_line(n: int, sub: SubQuestion, language: str) -> str:
    if not sub.covered:
        return f"{n}. {sub.text} — {prompts.NOTHING_FOUND_WORD[language]}"
    notes = ", ".join(wikilink(note.path, note.title) + (f" [{note.n}]" if note.n else "") for note in sub.notes)
    unsure = prompts.STEP_NOT_SURE[language] if sub.outcome == "closest" else ""
    return f"{n}. {sub.text} — {notes}{unsure}"


def _source_line(source: Source) -> str:
    if source.path:
        page = f", p. {source.page}" if source.page is not None else ""
        return f"- [{source.n}] {wikilink(source.path, source.title)}{page}"
    return f"- [{source.n}] [{source.title}]({source.url})"


_WORDS = {
    "fr": {"subs": "Sous-questions", "answer": "Réponse", "sources": "Sources"},
    "en": {"subs": "Sub-questions", "answer": "Answer", "sources": "Sources"},
}
