"""A day's events from the connected calendars, in time order: what the daily briefing lists."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from services.config import Settings
from services.language.dates import to_datetime
from services.vault.items import iter_item_paths, read_item
from services.vault.notes import NoteSkipped


@dataclass
class DayEvent:
    path: str
    summary: str
    start: datetime | None  # None: all day
    end: datetime | None
    location: str = ""

    @property
    def clock(self) -> str:
        """« 10:00 », or « toute la journée »."""
        return f"{self.start:%H:%M}" if self.start else "toute la journée"


def events_on(settings: Settings, day: date) -> list[DayEvent]:
    """The events of ``day`` (local time), all-day ones first, then by start time."""
    found = []
    for path, _file in iter_item_paths(settings.connectors_dir, "event:"):
        try:
            note = read_item(settings.connectors_dir, path, settings.max_file_bytes)
        except (OSError, NoteSkipped):
            continue
        meta = note.frontmatter
        start = to_datetime(meta.get("start"))
        if start is None or start.astimezone().date() != day:
            continue
        all_day = bool(meta.get("all_day"))
        end = to_datetime(meta.get("end"))
        found.append(
            DayEvent(
                path=path,
                summary=str(meta.get("summary") or note.title),
                start=None if all_day else start.astimezone(),
                end=None if all_day or end is None else end.astimezone(),
                location=str(meta.get("location") or ""),
            )
        )
    return sorted(found, key=lambda e: (e.start is not None, e.start or datetime.min, e.summary))
