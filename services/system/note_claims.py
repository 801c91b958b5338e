"""Per-note leases in Redis, so that several indexer processes on one Redis (server mode) never index the same
note at the same time.

Why leases on notes rather than idempotence alone: upserts are idempotent (a chunk's point id comes from its
note and its place, and the catalog compares content hashes), but two indexers reading one note at once would
both embed it, and one may write its older version last. Why not a lock on the queue: the index queue's tasks
are batches, and one note in a batch must not hold the others. A batch's notes are claimed one by one
(redis-py's ``Lock``: ``SET NX PX``, released only by its holder); those another indexer holds go back to the
queue a moment later, when their holder is done and the catalog says they are unchanged.

A lease outlives no crash: it lasts ``LEASE_SECONDS`` and its holder renews it while it works (a 2,000-page PDF
takes minutes), so a killed indexer's notes are free again within that time, and at once for the indexer
that restarts on the same host (``release_dead``: the holder's pid is gone).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import uuid

import psutil
import redis
from redis.exceptions import LockError
from redis.lock import Lock

log = logging.getLogger(__name__)

LEASE_SECONDS = 30.0
PREFIX = "obsirag:note-lease:"


class NoteClaims:
    """The leases this indexer holds, renewed every third of their life while held."""

    def __init__(self, client: redis.Redis, lease_seconds: float = LEASE_SECONDS) -> None:
        self.client = client
        self.lease_seconds = lease_seconds
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.held: dict[str, Lock] = {}
        self._guard = threading.Lock()
        self._renewer: threading.Thread | None = None

    def claim(self, paths: list[str]) -> tuple[list[str], list[str]]:
        """``paths`` split into those now leased here and those another indexer holds."""
        mine, theirs = [], []
        for path in paths:
            lock = self.client.lock(PREFIX + path, timeout=self.lease_seconds, blocking=False, thread_local=False)
            if lock.acquire(token=self.owner):
                with self._guard:
                    self.held[path] = lock
                mine.append(path)
            else:
                theirs.append(path)
        if mine:
            self._keep_renewing()
        return mine, theirs

    def release(self, paths: list[str]) -> None:
        for path in paths:
            with self._guard:
                lock = self.held.pop(path, None)
            if lock is not None:
                with contextlib.suppress(LockError):  # expired meanwhile: nobody's to release
                    lock.release()

    def holder(self, path: str) -> str | None:
        """Who leases ``path`` now (for the tests and the logs)."""
        value = self.client.get(PREFIX + path)
        return value.decode() if value else None

    def _keep_renewing(self) -> None:
        if self._renewer is None or not self._renewer.is_alive():
            self._renewer = threading.Thread(target=self._renew, name="note-leases", daemon=True)
            self._renewer.start()

    def _renew(self) -> None:
        while True:
            threading.Event().wait(self.lease_seconds / 3)
            with self._guard:
                locks = list(self.held.values())
            if not locks:
                return
            for lock in locks:
                with contextlib.suppress(LockError, redis.RedisError):  # Redis away: the lease lapses, no harm
                    lock.reacquire()


def release_dead(client: redis.Redis) -> int:
    """Drop the leases of indexers of this host that are no longer running (a killed one's, found by its
    restart); returns how many."""
    host = socket.gethostname()
    dropped = 0
    for key in client.scan_iter(match=PREFIX + "*", count=500):
        owner = (client.get(key) or b"").decode()
        owner_host, _, rest = owner.partition(":")
        pid = rest.partition(":")[0]
        if owner_host == host and pid.isdigit() and not psutil.pid_exists(int(pid)):
            dropped += client.delete(key)
    if dropped:
        log.info("freed %d note lease(s) of an indexer no longer running", dropped)
    return dropped
