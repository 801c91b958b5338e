"""Artifacts: what ObsiRAG wrote under ``obsirag/`` (insights, synapses, syntheses, saved conversations)."""

from __future__ import annotations

import re
from typing import Annotated, Any

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.params import Body, FromPath, FromQuery
from litestar.response import Template
from pydantic import BaseModel, Field

from services import vault
from services.catalog import LinksTable, NotesTable
from services.catalog.models import NoteRecord
from services.chat.export import exported_thread, provenance_label
from services.clipping.clip import ClipError
from services.config import Settings
from services.system.clip_indexed import clip_and_index
from services.vault.artifacts import GENERATED_ROOT
from services.vault.models import NoteType
from web.page_route import page
from web.rendering import MAX_EMBED_DEPTH, MarkdownRenderer

KINDS = (
    (NoteType.INSIGHT, "Insights"),
    (NoteType.SYNAPSE, "Synapses"),
    (NoteType.SYNTHESIS, "Synthèses"),
    (NoteType.CONVERSATION, "Conversations enregistrées"),
    (NoteType.RESEARCH, "Recherches"),
    (NoteType.BRIEFING, "Briefings"),
    (NoteType.PROFILE, "Profil et rappels"),
)
UrlEncoded = Body(media_type=RequestEncodingType.URL_ENCODED)
PER_KIND = 100
EXCERPT = 420
_COMMENT = re.compile(r"<!--.*?-->", re.S)


class QA(BaseModel):
    question: str
    answer: str


class Artifact(BaseModel):
    path: FromPath[str]
    title: str
    kind: NoteType
    created: Any = None
    tags: list[str] = Field(default_factory=list)
    provenance: str = ""
    sources: list[tuple[str, str]] = Field(default_factory=list)  # (path, title)
    exchanges: list[QA] = Field(default_factory=list)
    summary: str = ""  # sanitised HTML: the start of the body, rendered as the note viewer does


class ClipForm(BaseModel):
    url: str = ""


class ArtifactsController(Controller):
    path = "/artifacts"

    @post("/clip", sync_to_thread=True, status_code=200)
    def clip(self, settings: NamedDependency[Settings], data: Annotated[ClipForm, UrlEncoded]) -> Template:
        """A web page clipped into the vault (``services.clipping``), returned once indexed."""
        try:
            clipped, indexed = clip_and_index(settings, data.url)
        except ClipError as exc:
            return Template("_flash.html", context={"message": f"Import impossible : {exc}"}, status_code=422)
        context = {"clipped": clipped, "indexed": indexed}
        return Template("_clipped.html", context=context)

    @page("/", sync_to_thread=True)
    def index(
        self,
        settings: NamedDependency[Settings],
        notes: NamedDependency[NotesTable],
        links: NamedDependency[LinksTable],
        renderer: NamedDependency[MarkdownRenderer],
        kind: FromQuery[str] = "",
    ) -> Template:
        records = [n for n in notes.list_notes(folder=GENERATED_ROOT) if n.note_type != NoteType.NOTE]
        counts = {k: sum(r.note_type == k for r in records) for k, _ in KINDS}
        selected = NoteType(kind) if kind in {k.value for k, _ in KINDS} else None
        chosen = [r for r in records if selected is None or r.note_type == selected]
        chosen.sort(key=lambda r: r.created.timestamp() if r.created else r.mtime, reverse=True)
        artifacts = [_artifact(settings, notes, links, r) for r in chosen[:PER_KIND]]
        for item in artifacts:
            # Embeds stay links in a preview (the deepest level): a card is not the note.
            item.summary = renderer.render_note(item.summary, item.path, MAX_EMBED_DEPTH) if item.summary else ""
        context = {"kinds": KINDS, "counts": counts, "selected": selected, "artifacts": artifacts}
        return Template("artifacts.html", context={"active": "artifacts", **context})


def _artifact(settings: Settings, notes: NotesTable, links: LinksTable, record: NoteRecord) -> Artifact:
    try:
        note = vault.read_note(settings.vault, record.path, settings.max_file_bytes)
        body, frontmatter = note.body, note.frontmatter
    except (OSError, vault.NoteSkipped, vault.PathOutsideVault):
        body, frontmatter = "", {}
    titles: dict[str, str] = {}
    for link in links.outlinks(record.path):
        if link.target_path and link.target_path.endswith(".md"):
            target = notes.get_note(link.target_path)
            titles[link.target_path] = target.title if target else link.target_path
    provenance = str(frontmatter.get("provenance") or provenance_label(body))
    exchanges = _exchanges(body, frontmatter)
    return Artifact(
        path=record.path,
        title=record.title,
        kind=record.note_type,
        created=record.created,
        tags=record.tags,
        provenance=provenance,
        sources=list(titles.items()),
        exchanges=exchanges,
        summary="" if exchanges else _preview(body),
    )


def _exchanges(body: str, frontmatter: dict[str, Any]) -> list[QA]:
    """A saved conversation's ``## question`` / answer pairs, or an artifact's ``question``/``answer`` keys."""
    if frontmatter.get("question"):
        return [QA(question=str(frontmatter["question"]), answer=_excerpt(str(frontmatter.get("answer") or body)))]
    if str(frontmatter.get("type", "")).lower() != "conversation":
        return []
    return [QA(question=t.question, answer=_excerpt(t.answer)) for t in exported_thread(frontmatter, body).turns]


def _preview(text: str) -> str:
    """The body's first lines as Markdown (headings and markers left out), cut between lines, or between
    words outside a ``[[link]]`` when the first line alone is too long."""
    lines = [line for line in _COMMENT.sub("", text).split("\n") if line.strip() and not line.startswith("#")]
    if lines and len(lines[0]) > EXCERPT:
        cut = lines[0][:EXCERPT].rsplit(" ", 1)[0]
        if cut.count("[[") > cut.count("]]"):  # a link cut in two would show as raw Markdown
            cut = cut[: cut.rindex("[[")]
        return cut.rstrip() + " …"
    kept: list[str] = []
    for line in lines:
        if kept and sum(len(k) for k in kept) + len(line) > EXCERPT:
            return "\n".join(kept) + "\n\n…"
        kept.append(line)
    return "\n".join(kept)


def _excerpt(text: str) -> str:
    text = _COMMENT.sub("", text)  # the profile's managed-section markers
    flat = " ".join(line.strip() for line in text.split("\n") if line.strip() and not line.startswith("#"))
    return flat if len(flat) <= EXCERPT else flat[:EXCERPT].rsplit(" ", 1)[0] + " …"
