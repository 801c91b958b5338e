"""The weekly synthesis: the user notes changed during the week, summarised into ``obsirag/synthesis/<YYYY-Www>.md``.

A note changed in the week when its frontmatter dates (created/updated) or its file's mtime fall in it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from services import vault
from services.catalog import NotesTable
from services.catalog.models import NoteRecord, NoteStatus, Provenance
from services.config import Settings
from services.language.detect import detect_language
from services.learner import prompts
from services.learner.insights import MIN_ANSWER_WORDS, answer_problem, prompt_chars
from services.learner.pacing import LearnerModel
from services.learner.schedule import WeekSlot
from services.vault.artifacts import append_to_artifact, create_artifact, render_frontmatter, wikilink
from services.vault.models import NoteType

FOLDER = "synthesis"
NOTE_CHARS = 600  # of each note in the prompt
PROMPT_CHARS = 6000


def week_notes(notes: NotesTable, week: WeekSlot) -> list[NoteRecord]:
    """Indexed user notes created, updated or saved during the week, oldest first."""
    found = []
    for record in notes.list_notes(status=NoteStatus.INDEXED):
        if record.note_type != NoteType.NOTE:
            continue
        stamps = [s for s in (record.created, record.modified) if s is not None]
        stamps.append(datetime.fromtimestamp(record.mtime, UTC))
        if any(week.start <= s < week.end for s in stamps):
            found.append(record)
    return sorted(found, key=lambda r: (r.modified or r.created or datetime.min.replace(tzinfo=UTC), r.path))


def summarise_week(model: LearnerModel, settings: Settings, notes: list[NoteRecord]) -> str:
    """The model's summary, or ``""`` with nothing usable; raises nothing but generation errors."""
    pieces: list[str] = []
    for record in notes:
        note = vault.read_note_if_readable(settings.vault, record.path, settings.max_file_bytes)
        if note is None:
            continue
        pieces.append(f"## {note.title}\n{' '.join(note.body.split())[:NOTE_CHARS]}")
    text = "\n\n".join(pieces)[: min(PROMPT_CHARS, 2 * prompt_chars(settings))]
    language = detect_language(text)
    reply = model.ask(prompts.SYNTHESIS_SYSTEM[language], text)
    return reply if answer_problem("", reply, Provenance.VAULT) is None else ""


def write_synthesis(
    vault_root: Path, week: WeekSlot, notes: list[NoteRecord], summary: str, now: datetime, missing: str | None = None
) -> str:
    """Create ``synthesis/<week>.md``, or append a dated section when it exists (never rewritten);
    ``missing``: why there is no summary, when known (the model cannot write)."""
    relative = f"{FOLDER}/{week.label}.md"
    body = render_body(week, notes, summary, missing)
    frontmatter = {
        "title": prompts.SYNTHESIS_TITLE.format(week=week.label),
        "type": "synthesis",
        "week": week.label,
        "tags": ["synthesis", "obsirag"],
        "generated": now.astimezone().date().isoformat(),
        "period_start": week.start.astimezone().date().isoformat(),
        "period_end": week.end.astimezone().date().isoformat(),
    }
    heading = f"# {prompts.SYNTHESIS_TITLE.format(week=week.label)}\n\n"
    created = create_artifact(vault_root, relative, render_frontmatter(frontmatter) + heading + body)
    if created is None:
        append_to_artifact(vault_root, vault_root / "obsirag" / relative, f"---\n\n{body}")
    return f"obsirag/{relative}"


def render_body(week: WeekSlot, notes: list[NoteRecord], summary: str, missing: str | None = None) -> str:
    lines = [f"## {prompts.SUMMARY}", ""]
    lines += [summary if summary else prompts.NO_SUMMARY.format(reason=missing or _no_summary_reason(notes)), ""]
    lines += [f"## {prompts.WEEK_NOTES}", ""]
    lines += [f"- {wikilink(r.path, r.title)}" for r in notes] or ["- —"]
    return "\n".join(lines).rstrip() + "\n"


def _no_summary_reason(notes: list[NoteRecord]) -> str:
    if not notes:
        return "aucune note modifiée cette semaine"
    return f"le modèle n'a rien produit d'utilisable (moins de {MIN_ANSWER_WORDS} mots ou texte générique)"
