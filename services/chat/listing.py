"""Listing and summary questions: which notes mention X or Y, and what did I write in a period."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from services.catalog import NotesTable
from services.catalog.models import NoteRecord, Source
from services.chat.context import ContextBlock
from services.chat.query import QueryPlan
from services.config import Settings
from services.llm.limits import estimate_tokens
from services.retrieval import lexical
from services.retrieval.embedding import DEFAULT_CALIBRATION, Calibration
from services.retrieval.search import SearchResponse, SearchResult
from services.vault.items import read_source_if_readable
from services.vault.models import NoteType

LIST_K = 25
LATEST_NOTES = 10
NOTE_CHARS = 4000  # one note's share in a summary: its beginning is what a summary needs most


def answer_listing(
    plan: QueryPlan, retrieve: Callable[[str, int], SearchResponse], calibration: Calibration = DEFAULT_CALIBRATION
) -> list[Source]:
    """The notes about one of the topics, best first, each with the passage that makes it relevant.

    A note is about a topic when it holds every term of the topic, or when its best chunk is about as
    close in meaning as the topic's closest note (within the model's ``list_drop``, above its
    ``support_cosine``; across languages with a multilingual model) and it scores ``list_share`` of the
    best note. A note found for several topics keeps its best score.
    """
    scored: dict[str, tuple[float, SearchResult]] = {}
    for topic in plan.topics or [plan.retrieval_query]:
        results = retrieve(topic, LIST_K).results
        for result in results:
            better = result.score > scored.get(result.path, (-1.0, result))[0]
            if better and is_about(topic, result, results, calibration):
                scored[result.path] = (result.score, result)
    ranked = sorted(scored.values(), key=lambda item: -item[0])
    return listed([r for _, r in ranked])


def listed(results: list[SearchResult]) -> list[Source]:
    """``results`` as the numbered sources of a listing, each with its best passage."""
    return [
        Source(
            n=n,
            title=r.title,
            path=r.path,
            heading=r.heading,
            passage=r.snippet,
            page=r.page,
            screenshot=r.screenshot,
        )
        for n, r in enumerate(results, start=1)
    ]


def is_about(topic: str, result: SearchResult, results: list[SearchResult], calibration: Calibration) -> bool:
    terms = set(lexical.analyze(topic))
    if terms and terms <= set(lexical.analyze(f"{result.title} {result.heading} {result.text}")):
        return True
    closest = max((r.dense_score or 0.0 for r in results), default=0.0)
    floor = max(calibration.support_cosine, closest - calibration.list_drop)
    return (result.dense_score or 0.0) >= floor and result.score >= results[0].score * calibration.list_share


def notes_in_range(notes: NotesTable, settings: Settings, plan: QueryPlan) -> list[ContextBlock]:
    """The user's notes dated in the plan's range (or the latest ones), newest first, as excerpts dated."""
    types = plan.types or [NoteType.NOTE]
    records = [r for r in notes.list_notes() if r.note_type in types and r.chunk_count > 0]
    if plan.since is not None:
        records = [r for r in records if _in_range(r, plan)]
    records = sorted(records, key=lambda r: _timestamp(_date(r, plan)), reverse=True)
    if plan.since is None:
        records = records[:LATEST_NOTES]
    blocks = []
    for record in records:
        text = _note_text(settings, record)
        if text:
            n = len(blocks) + 1
            blocks.append(ContextBlock(n, record.path, record.title, "", text, dated=_date(record, plan)))
    return blocks


def batch_blocks(blocks: list[ContextBlock], budget_tokens: int) -> list[list[ContextBlock]]:
    """Consecutive groups of excerpts that each fit the budget (the map step of a map-reduce summary)."""
    batches: list[list[ContextBlock]] = [[]]
    used = 0
    for block in blocks:
        cost = estimate_tokens(block.text)
        if batches[-1] and used + cost > budget_tokens:
            batches.append([])
            used = 0
        batches[-1].append(block)
        used += cost
    return [b for b in batches if b]


def _date(record: NoteRecord, plan: QueryPlan) -> datetime | None:
    """The note's date in the plan's range (written then, or changed then), else its latest one."""
    stamps = [s for s in (record.created, record.modified) if s is not None]
    if plan.since is not None:
        stamps = [s for s in stamps if _within(s, plan)] or stamps
    return max(stamps, key=_timestamp, default=None)


def _timestamp(stamp: datetime | None) -> float:
    return stamp.timestamp() if stamp else 0.0


def _in_range(record: NoteRecord, plan: QueryPlan) -> bool:
    return any(_within(s, plan) for s in (record.created, record.modified) if s is not None)


def _within(stamp: datetime, plan: QueryPlan) -> bool:
    return plan.since <= stamp < plan.until  # type: ignore[operator]


def _note_text(settings: Settings, record: NoteRecord) -> str:
    note = read_source_if_readable(settings, record.path)
    return note.body.strip()[:NOTE_CHARS] if note else ""
