"""What one consolidation reads: the notes and chat turns changed after the watermark, oldest first.

Changes are ordered by (time, key) so that many notes sharing one mtime (a sync, a checkout) are read
over several runs, never twice and never skipped; the watermark is the last change read. A run stops
at the first change that does not fit its counts (``memory_max_notes``, ``memory_max_turns``) or its
size (``memory_prompt_chars``). Every text is redacted line by line before it is kept.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from services import vault
from services.catalog import MemoryTable
from services.config import Settings
from services.llm.redact import redact
from services.vault.artifacts import is_generated

WATERMARK_KEY = "memory.consolidated_until"
FIRST_LOOKBACK = timedelta(days=7)  # the first run reads a week back, not the whole vault
TURN_ANSWER_CHARS = 300


@dataclass(frozen=True, order=True)
class Mark:
    """A change's place in the order: its time, then its key (``note:<path>``, ``turn:<thread>:<time>``)."""

    stamp: datetime
    key: str = ""

    def dump(self) -> str:
        return json.dumps({"at": self.stamp.isoformat(), "key": self.key})

    @classmethod
    def load(cls, text: str | None) -> Mark | None:
        if not text:
            return None
        data = json.loads(text)
        return cls(datetime.fromisoformat(data["at"]), data["key"])


@dataclass(frozen=True)
class SourceText:
    label: str  # "S1"
    kind: str  # "note" or "conversation"
    ref: str  # the note's path or the thread id
    text: str  # redacted
    mark: Mark


@dataclass
class Collected:
    sources: list[SourceText]
    redactions: int
    until: Mark  # the watermark once these are read


@dataclass(frozen=True)
class _Change:
    mark: Mark
    kind: str
    ref: str
    turn: dict[str, object] | None = None


def collect_sources(settings: Settings, memory: MemoryTable, since: Mark | None, now: datetime) -> Collected:
    since = since or Mark(now - FIRST_LOOKBACK)
    changes = sorted(_note_changes(settings, since) + _turn_changes(settings, memory, since), key=lambda c: c.mark)
    sources: list[SourceText] = []
    counts = {"note": 0, "conversation": 0}
    limits = {"note": settings.memory_max_notes, "conversation": settings.memory_max_turns}
    used = redactions = 0
    for change in changes:
        text = _text(settings, change)
        if text is None:
            continue  # gone or unreadable since it was listed
        if limits[change.kind] == 0:
            continue  # that kind of source is switched off
        clean = redact(text)
        full = counts[change.kind] >= limits[change.kind]
        if full or (sources and used + len(clean.text) > settings.memory_prompt_chars):
            return Collected(sources, redactions, sources[-1].mark if sources else since)
        counts[change.kind] += 1
        used += len(clean.text)
        redactions += clean.total
        sources.append(SourceText(f"S{len(sources) + 1}", change.kind, change.ref, clean.text, change.mark))
    return Collected(sources, redactions, Mark(now))


def _note_changes(settings: Settings, since: Mark) -> list[_Change]:
    changes = []
    for path, mtime in user_note_times(settings):  # ObsiRAG's own files (the profile itself) are no source
        mark = Mark(datetime.fromtimestamp(mtime, UTC), f"note:{path}")
        if mark > since:
            changes.append(_Change(mark, "note", path))
    return changes


def user_note_times(settings: Settings) -> list[tuple[str, float]]:
    """The user's notes (not ObsiRAG's own, under ``obsirag/``) with their file's time: one walk and a stat
    each, nothing read (the briefing and consolidation look at a 50,000-note vault this way, #34)."""
    found = []
    for path in vault.iter_vault_paths(settings.vault, settings.exclude):
        if is_generated(path):
            continue
        with contextlib.suppress(OSError):  # gone since the walk
            found.append((path, (settings.vault / path).stat().st_mtime))
    return found


def _turn_changes(settings: Settings, memory: MemoryTable, since: Mark) -> list[_Change]:
    changes = []
    for turn in memory.turns_since(since.stamp - timedelta(microseconds=1), settings.memory_max_turns + 1):
        stamp: datetime = turn["created_at"]  # type: ignore[assignment]
        mark = Mark(stamp.astimezone(UTC), f"turn:{turn['thread_id']}:{stamp.isoformat()}")
        if mark > since:
            changes.append(_Change(mark, "conversation", str(turn["thread_id"]), turn))
    return changes


def _text(settings: Settings, change: _Change) -> str | None:
    if change.turn is not None:
        answer = compact(str(change.turn["answer"]))[:TURN_ANSWER_CHARS]
        question = compact(str(change.turn["question"]))
        return f"Utilisateur : {question}\nAssistant : {answer}"[: settings.memory_note_chars]
    note = vault.read_note_if_readable(settings.vault, change.ref, settings.max_file_bytes)
    return None if note is None else f"{note.title}\n{compact(note.body)}"[: settings.memory_note_chars]


def compact(text: str) -> str:
    """Blank lines and indentation out, line breaks kept (a password line must stay one line to be redacted)."""
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())
