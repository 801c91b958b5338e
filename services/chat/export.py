"""Export a conversation as a Markdown note under ``obsirag/conversations/`` (ObsiRAG's only write path)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import yaml

from services.catalog.models import Provenance, Source, Thread, Turn
from services.indexing.conversations import NOT_EVIDENCE
from services.vault.artifacts import generated_path, slugify

PROVENANCE_LABELS = {
    Provenance.VAULT: "Coffre",
    Provenance.WEB: "Web",
    Provenance.BOTH: "Coffre et Web",
    Provenance.NONE: "Aucune",
}


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
    primary = " (note principale)" if source.primary else ""
    return f"[{source.n}] [[{target}{heading}|{source.title}]]{primary}"
