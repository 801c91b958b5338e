"""Synapses: two user notes close in meaning that link to each other in neither direction, the implicit
connection the model sees between them, and ``obsirag/synapses/<NoteA>__<NoteB>_<YYYYMMDD>.md``.

Every pair considered is remembered in the catalog (``a`` < ``b``), so none is processed twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from services.catalog import Catalog
from services.catalog.models import NoteStatus
from services.learner import prompts
from services.learner.insights import MIN_ANSWER_WORDS, note_excerpt
from services.learner.pacing import LearnerModel
from services.vault.artifacts import (
    create_artifact,
    is_generated,
    render_frontmatter,
    slugify,
    vault_relative,
    wikilink,
)
from services.vault.models import NoteType, ParsedNote

SimilarFn = Callable[[str, float, int], list[tuple[str, float]]]
FOLDER = "synapses"
EXCERPT_CHARS = 400
PAIR_CHARS = 900  # of each note in the prompt
CANDIDATES = 8
_QUESTION = re.compile(r"^\W*question\s*:?\s*(.+)$", re.I | re.M)


@dataclass
class Connection:
    explanation: str
    question: str


def synapse_candidates(
    catalog: Catalog, similar: SimilarFn, path: str, threshold: float, limit: int = 1
) -> list[tuple[str, float]]:
    """Up to ``limit`` user notes close to ``path`` (cosine ≥ threshold), never linked to it either way,
    never paired with it before; closest first."""
    found = []
    for other, score in similar(path, threshold, CANDIDATES):
        record = catalog.get_note(other)
        if record is None or record.note_type != NoteType.NOTE or record.status != NoteStatus.INDEXED:
            continue
        if is_generated(other):
            continue
        if other == path or catalog.linked(path, other) or catalog.pair_seen(path, other):
            continue
        found.append((other, score))
        if len(found) >= limit:
            break
    return found


def explain_connection(
    model: LearnerModel, a: ParsedNote, b: ParsedNote, language: str, chars: int = PAIR_CHARS
) -> Connection | str:
    """The model's explanation and question, or why it was rejected (``chars``: of each note in the prompt)."""
    prompt = prompts.PAIR_HEADER[language].format(
        a=a.title, b=b.title, text_a=note_excerpt(a, chars), text_b=note_excerpt(b, chars)
    )
    return parse_connection(model.ask(prompts.SYNAPSE_SYSTEM[language], prompt))


def parse_connection(reply: str) -> Connection | str:
    """The explanation (and a question when the last line holds one), or why the reply is unusable."""
    match = _QUESTION.search(reply)
    question = match[1].strip() if match else ""
    explanation = (reply[: match.start()] if match else reply).strip()
    if len(explanation.split()) < MIN_ANSWER_WORDS:
        return f"no usable explanation ({len(explanation.split())} words)"
    if not question.endswith("?"):
        question = ""
    return Connection(explanation, question)


def synapse_relative(a: ParsedNote, b: ParsedNote, now: datetime) -> str:
    return f"{FOLDER}/{slugify(a.title, 40)}__{slugify(b.title, 40)}_{now.astimezone():%Y%m%d}.md"


def write_synapse(
    vault_root: Path, a: ParsedNote, b: ParsedNote, score: float, connection: Connection, now: datetime
) -> str | None:
    """Create the synapse file; None when a file of that name exists (it is never replaced)."""
    created = create_artifact(vault_root, synapse_relative(a, b, now), render_synapse(a, b, score, connection, now))
    return vault_relative(vault_root, created) if created is not None else None


def render_synapse(a: ParsedNote, b: ParsedNote, score: float, connection: Connection, now: datetime) -> str:
    frontmatter = {
        "title": prompts.SYNAPSE_TITLE.format(a=a.title, b=b.title),
        "type": "synapse",
        "notes": [wikilink(a.path, a.title), wikilink(b.path, b.title)],
        "note_paths": [a.path, b.path],
        "similarity": round(score, 4),
        "tags": ["synapse"],
        "generated": now.astimezone().date().isoformat(),
    }
    lines = [f"# {prompts.SYNAPSE_TITLE.format(a=a.title, b=b.title)}", ""]
    lines += [f"- {wikilink(a.path, a.title)}", f"- {wikilink(b.path, b.title)}", ""]
    lines += [prompts.SIMILARITY_LINE.format(score=score), ""]
    lines += [f"## {prompts.CONNECTION}", "", connection.explanation, ""]
    if connection.question:
        lines += [f"## {prompts.QUESTION_TO_EXPLORE}", "", connection.question, ""]
    lines += [f"## {prompts.EXCERPTS}", ""]
    for note in (a, b):
        lines += [f"### {wikilink(note.path, note.title)}", "", f"> {note_excerpt(note, EXCERPT_CHARS)}…", ""]
    return render_frontmatter(frontmatter) + "\n".join(lines).rstrip() + "\n"
