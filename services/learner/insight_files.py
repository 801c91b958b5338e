"""The insight file of a note: created once, then extended (questions numbered on, tags and dates merged)."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from services import vault
from services.catalog.models import Provenance, Source
from services.chat.export import PROVENANCE_LABELS
from services.learner import prompts
from services.learner.insights import InsightAnswer, SemanticField, combined_provenance
from services.vault.artifacts import (
    append_to_artifact,
    create_artifact,
    merge_list,
    render_frontmatter,
    scan_artifacts,
    slugify,
    vault_relative,
    wikilink,
)
from services.vault.models import ParsedNote

FOLDER = "insights"
ENTITY_PREFIXES = ("personne/", "org/", "lieu/")
MIN_SHARED_ENTITY_TAGS = 2
_QUESTION_HEADING = re.compile(r"^## Question (\d+)\b\s*:?\s*(.*)$", re.M)
_LABEL_TO_PROVENANCE = {label: provenance for provenance, label in PROVENANCE_LABELS.items()}


def insight_relative(note: ParsedNote, now: datetime) -> str:
    """``insights/YYYY-MM/<Title_slug>_<YYYYMMDD>.md`` (under ``obsirag/``), local date."""
    local = now.astimezone()
    return f"{FOLDER}/{local:%Y-%m}/{slugify(note.title)}_{local:%Y%m%d}.md"


def find_insight(vault_root: Path, source: str, entity_tags: list[str]) -> Path | None:
    """The insight of ``source``, else the one sharing the most (at least two) entity tags with it."""
    best: tuple[int, Path] | None = None
    wanted = set(entity_tags)
    for path, frontmatter in scan_artifacts(vault_root, FOLDER):
        if frontmatter.get("source_path") == source:
            return path
        tags = {t for t in merge_list(frontmatter.get("tags"), []) if t.startswith(ENTITY_PREFIXES)}
        shared = len(tags & wanted)
        if shared >= MIN_SHARED_ENTITY_TAGS and (best is None or shared > best[0]):
            best = (shared, path)
    return best[1] if best else None


def asked_questions(path: Path) -> list[str]:
    """The questions an insight file already holds (so that an extension asks new ones)."""
    try:
        return [m[2].strip() for m in _QUESTION_HEADING.finditer(path.read_text(encoding="utf-8")) if m[2].strip()]
    except OSError:
        return []


def write_insight(
    vault_root: Path,
    note: ParsedNote,
    field_: SemanticField,
    answers: list[InsightAnswer],
    entity_tags: list[str],
    now: datetime,
) -> tuple[str, bool]:
    """Extend the note's insight, or create it. Returns (vault path, created)."""
    existing = find_insight(vault_root, note.path, entity_tags)
    if existing is not None:
        extend_insight(vault_root, existing, note, answers, entity_tags, now)
        return vault_relative(vault_root, existing), False
    text = render_insight(note, field_, answers, entity_tags, now)
    relative = insight_relative(note, now)
    for attempt in range(1, 100):  # a same-named file (another note's title, or the user's) is never replaced
        name = relative if attempt == 1 else relative.replace(".md", f"~{attempt}.md")
        created = create_artifact(vault_root, name, text)
        if created is not None:
            return vault_relative(vault_root, created), True
    raise FileExistsError(relative)


def render_insight(
    note: ParsedNote, field_: SemanticField, answers: list[InsightAnswer], entity_tags: list[str], now: datetime
) -> str:
    day = now.astimezone().date().isoformat()
    provenance = combined_provenance([a.provenance for a in answers])
    frontmatter = {
        "title": prompts.INSIGHT_TITLE.format(title=note.title),
        "type": "insight",
        "source": wikilink(note.path, note.title),
        "source_path": note.path,
        "tags": merge_list(["insight"], [*note.tags, *entity_tags]),
        "generated": day,
        "updated": day,
        "provenance": PROVENANCE_LABELS[provenance],
        "domain": field_.domain,
        "concepts": field_.concepts,
    }
    lines = [f"# {prompts.INSIGHT_TITLE.format(title=note.title)}", ""]
    lines += [prompts.SOURCE_LINE.format(link=wikilink(note.path, note.title)), ""]
    return render_frontmatter(frontmatter) + "\n".join(lines) + "\n" + render_answers(answers, 1)


def render_answers(answers: list[InsightAnswer], first: int) -> str:
    blocks = []
    for number, answer in enumerate(answers, start=first):
        lines = [f"## Question {number} : {answer.question}", "", answer.answer, ""]
        lines += [prompts.PROVENANCE_LINE.format(label=PROVENANCE_LABELS[answer.provenance]), ""]
        if answer.notes:
            lines += [prompts.CONSULTED, *[f"- {wikilink(s.path or '', s.title)}" for s in answer.notes], ""]
        if answer.web:
            lines += [prompts.WEB_REFERENCES, *[_web_reference(s, answer.read) for s in answer.web], ""]
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def _web_reference(source: Source, read: list[str]) -> str:
    """A Markdown link to the page, saying whether the answer rests on the page itself or on its snippet."""
    return f"- [{source.title}]({source.url})" + (f" {prompts.PAGE_READ}" if source.url in read else "")


def extend_insight(
    vault_root: Path,
    path: Path,
    note: ParsedNote,
    answers: list[InsightAnswer],
    entity_tags: list[str],
    now: datetime,
) -> None:
    """Append the new questions (numbering continues); merge tags, update date and provenance."""
    body = vault.split_frontmatter(path.read_text(encoding="utf-8"))[2]
    numbers = [int(m[1]) for m in _QUESTION_HEADING.finditer(body)]
    addition = render_answers(answers, max(numbers, default=0) + 1)
    source = vault.split_frontmatter(path.read_text(encoding="utf-8"))[0].get("source_path")
    if source != note.path:  # another note's insight, joined through shared entities
        addition = prompts.SOURCE_LINE.format(link=wikilink(note.path, note.title)) + "\n\n" + addition
    day = now.astimezone().date().isoformat()

    def update(frontmatter: dict[str, Any]) -> dict[str, Any]:
        frontmatter["tags"] = merge_list(frontmatter.get("tags"), ["insight", *note.tags, *entity_tags])
        frontmatter["updated"] = day
        frontmatter.setdefault("generated", day)
        old = _LABEL_TO_PROVENANCE.get(str(frontmatter.get("provenance")), Provenance.NONE)
        merged = combined_provenance([old, *(a.provenance for a in answers)])
        frontmatter["provenance"] = PROVENANCE_LABELS[merged]
        if source != note.path:
            frontmatter["related_sources"] = merge_list(frontmatter.get("related_sources"), [note.path])
        return frontmatter

    append_to_artifact(vault_root, path, addition, update)
