"""Fresh edits cut in: while the indexer embeds a big note or document, the small notes a user saved meanwhile
are indexed between two of its encode batches, not after it (a 2,000-page PDF took ~2 minutes).

The index queue has one consumer (one writer for the store and the catalog), so a big sync cannot be overtaken
by another consumer; it lets the fresh edits in itself, the way a learner generation lets a chat in
(``queues.WaitingChats``). Reads Huey's sorted set directly (scores are negated priorities, members carry an
8-byte time prefix): Huey has no "peek" call.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from huey import PriorityRedisHuey

from services.attachments.kinds import attachment_kind
from services.config import Settings
from services.system.queues import EVENT_PRIORITY

log = logging.getLogger(__name__)

CUT_IN_TASKS = frozenset({"sync_batch", "sync_note"})
SMALL_NOTE_BYTES = 256 * 1024  # a note this size embeds in a second or two: it may cut in, a bigger one waits
LOOK_AHEAD = 32  # fresh tasks looked at per pause


class FreshEdits:
    """Runs, between two encode batches of a big sync, the waiting user edits of small notes."""

    def __init__(self, huey: PriorityRedisHuey, settings: Settings) -> None:
        self.huey = huey
        self.settings = settings
        self.running = False  # a note cutting in never lets another cut in: one level, no recursion

    def run(self, busy: frozenset[str]) -> int:
        """Run the fresh edits waiting now, except those of ``busy`` paths (the sync under way writes them
        last, and would overwrite them); returns how many tasks ran."""
        if self.running:
            return 0
        self.running = True
        try:
            return sum(self._take_and_run(member, busy) for member in self._waiting())
        finally:
            self.running = False

    def _waiting(self) -> list[bytes]:
        storage = self.huey.storage
        return storage.conn.zrangebyscore(storage.queue_key, "-inf", -EVENT_PRIORITY, start=0, num=LOOK_AHEAD)

    def _take_and_run(self, member: bytes, busy: frozenset[str]) -> bool:
        task = self.huey.deserialize_task(member[8:])
        if task.name not in CUT_IN_TASKS:
            return False
        paths = _paths(task)
        if not self._small_notes(paths, busy):
            return False
        if not self.huey.storage.conn.zrem(self.huey.storage.queue_key, member):
            return False  # dequeued meanwhile
        log.info("cut in: %s", ", ".join(paths))
        self.huey.execute(task)
        return True

    def _small_notes(self, paths: list[str], busy: frozenset[str]) -> bool:
        return all(
            path not in busy
            and attachment_kind(path, self.settings.attachments) is None
            and _size(self.settings.vault / path) <= SMALL_NOTE_BYTES
            for path in paths
        )


def _paths(task: Any) -> list[str]:
    """``sync_batch(paths)`` or ``sync_note(path)``."""
    first = task.args[0] if task.args else []
    return [first] if isinstance(first, str) else list(first)


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:  # gone: its sync deletes it, which costs nothing
        return 0
