"""A conversation exported as a Markdown note under ``obsirag/conversations/`` (ObsiRAG's only write path),
and that note read back (``read_export``): the one place that knows the export's layout."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from services import vault
from services.attachments.kinds import KINDS, extension
from services.catalog.models import Provenance, Source, Thread, Turn
from services.indexing.conversations import NOT_EVIDENCE
from services.vault.artifacts import generated_path, slugify

PROVENANCE_LABELS = {
    Provenance.VAULT: "Coffre",
    Provenance.WEB: "Web",
    Provenance.BOTH: "Coffre et Web",
    Provenance.NONE: "Aucune",
}
_LABEL_PROVENANCE = {label: provenance for provenance, label in PROVENANCE_LABELS.items()}
_PROVENANCE_LINE = re.compile(r"^\*Provenance\s*:\s*(.+?)\*\s*$", re.M)
_SOURCES_BLOCK = re.compile(r"^Sources\s*:\s*\n(?:- .*\n?)*", re.M)
_WEB_SOURCE = re.compile(r"^- \[(\d+)\] \[(.*)\]\((.*)\)\s*$")
_NOTE_SOURCE = re.compile(r"^- \[(\d+)\] \[\[([^|\]]*)\|(.*)\]\]( \(note principale\))?\s*$")


class ExportedTurn(BaseModel):
    """One ``## question`` of an export: the answer as written, its provenance and cited sources."""

    question: str
    answer: str
    provenance: Provenance | None = None  # None: no provenance line, or one this version does not know
    sources: list[Source] = Field(default_factory=list)


class ExportedThread(BaseModel):
    """What ``render_thread`` wrote, read back (source headings keep their last level only, as written)."""

    id: str = ""
    title: str = ""
    created_at: datetime | None = None
    exported_at: datetime | None = None
    turns: list[ExportedTurn] = Field(default_factory=list)


def export_thread(vault: Path, thread: Thread, now: datetime) -> Path:
    """Write ``obsirag/conversations/YYYY-MM/<slug>_<YYYYMMDD_HHMM>.md``; never overwrites an existing file."""
    local = now.astimezone()
    relative = f"conversations/{local:%Y-%m}/{slugify(thread.title)}_{local:%Y%m%d_%H%M}.md"
    target = generated_path(vault, relative)
    target.parent.mkdir(parents=True, exist_ok=True)
    counter = 1
    while target.exists():  # a user's file (or an earlier export) is never replaced
        counter += 1
        target = target.with_name(f"{target.stem.split('~')[0]}~{counter}.md")
    target.write_text(render_thread(thread, local), encoding="utf-8")
    return target


def render_thread(thread: Thread, now: datetime) -> str:
    frontmatter = {
        "title": thread.title,
        "created": thread.created_at.astimezone().isoformat(timespec="minutes"),
        "exported": now.isoformat(timespec="minutes"),
        "tags": ["conversation", "obsirag"],
        "type": "conversation",
        "thread": thread.id,
    }
    lines = ["---", yaml.safe_dump(frontmatter, allow_unicode=True, sort_keys=False).strip(), "---", ""]
    lines += [f"# {thread.title}", ""]
    for turn in thread.turns:
        lines += [f"## {turn.question}", "", turn.answer, ""]
        lines += [f"*Provenance : {PROVENANCE_LABELS[turn.provenance]}*", ""]
        if not is_evidence(turn):
            lines += [NOT_EVIDENCE, ""]
        if turn.sources:
            lines += ["Sources :", *[f"- {_source_link(s)}" for s in turn.sources], ""]
    return "\n".join(lines).rstrip() + "\n"


def is_evidence(turn: Turn) -> bool:
    """A turn a later question may be answered from: not a confirmation, a refusal or a failure."""
    if turn.kind is not None:
        return turn.kind.evidence
    return not turn.error and turn.provenance != Provenance.NONE  # a turn from before kinds were recorded


def _source_link(source: Source) -> str:
    if source.url:
        return f"[{source.n}] [{source.title}]({source.url})"
    target = (source.path or "").removesuffix(".md")
    heading = f"#{source.heading.split(' > ')[-1]}" if source.heading else ""
    if source.page is not None:  # Obsidian opens a PDF at ``[[doc.pdf#page=12]]``
        heading = f"#page={source.page}"
    primary = " (note principale)" if source.primary else ""
    return f"[{source.n}] [[{target}{heading}|{source.title}]]{primary}"


# --- reading an export back -------------------------------------------------------------------------


def read_export(text: str) -> ExportedThread:
    """The thread an exported note holds (its whole text, frontmatter included)."""
    frontmatter, _error, body = vault.split_frontmatter(text)
    return exported_thread(frontmatter, body)


def exported_thread(frontmatter: dict[str, Any], body: str) -> ExportedThread:
    """The thread of an export already split (``vault.read_note``'s ``frontmatter`` and ``body``)."""
    headings = vault.extract_headings(body)
    title = next((h.text for h in headings if h.level == 1), "")
    questions = [h for h in headings if h.level == 2]
    lines = body.split("\n")
    turns = []
    for i, heading in enumerate(questions):
        end = questions[i + 1].line if i + 1 < len(questions) else len(lines)
        turns.append(_turn(heading.text, "\n".join(lines[heading.line + 1 : end])))
    return ExportedThread(
        id=str(frontmatter.get("thread") or ""),
        title=str(frontmatter.get("title") or title),
        created_at=_moment(frontmatter.get("created")),
        exported_at=_moment(frontmatter.get("exported")),
        turns=turns,
    )


def provenance_label(body: str) -> str:
    """The label of the first ``*Provenance : …*`` line (``""`` without one), as written."""
    found = _PROVENANCE_LINE.search(body)
    return found[1] if found else ""


def _turn(question: str, section: str) -> ExportedTurn:
    sources = _SOURCES_BLOCK.search(section)
    source_lines = sources[0].split("\n")[1:] if sources else []
    return ExportedTurn(
        question=question,
        answer=_SOURCES_BLOCK.sub("", _PROVENANCE_LINE.sub("", section)).strip(),
        provenance=_LABEL_PROVENANCE.get(provenance_label(section)),
        sources=[source for line in source_lines if (source := _read_source(line)) is not None],
    )


def _read_source(line: str) -> Source | None:
    """A ``Sources :`` line as ``_source_link`` wrote it."""
    if web := _WEB_SOURCE.match(line):
        return Source(n=int(web[1]), title=web[2], url=web[3])
    if note := _NOTE_SOURCE.match(line):
        target, _, heading = note[2].partition("#")
        page = int(heading[5:]) if heading.startswith("page=") and heading[5:].isdigit() else None
        path = target if page is not None or extension(target) in KINDS else f"{target}.md"
        primary = bool(note[4])
        return Source(
            n=int(note[1]), title=note[3], path=path, heading="" if page else heading, primary=primary, page=page
        )
    return None


def _moment(value: object) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None
