"""Is ObsiRAG's supervisor alive, and does its Redis answer? What every surface tells the user.

The supervisor holds a lock in the data dir for as long as it runs (``obsirag up``). A reader that cannot
reach Redis probes that lock: held means the system runs and Redis is restarting (the supervisor restarts a
dead private Redis within seconds), free means nothing runs.
"""

from __future__ import annotations

import os
from enum import StrEnum

from filelock import FileLock, Timeout

from services.config import Settings

LOCK_NAME = "supervisor.lock"
START_WAIT = 1.0  # seconds `obsirag up` waits for the lock: a reader's probe holds it for microseconds


class RedisState(StrEnum):
    READY = "ready"  # Redis answers
    RESTARTING = "restarting"  # the supervisor runs and is restarting its private Redis
    UNREACHABLE = "unreachable"  # the supervisor runs but the Redis of OBSIRAG_REDIS_URL does not answer
    STOPPED = "stopped"  # no supervisor runs on this data dir and Redis does not answer


REDIS_MESSAGES = {
    "fr": {
        RedisState.RESTARTING: "Redis redémarre… les tâches en file attendent ; réessaie dans quelques secondes.",
        RedisState.UNREACHABLE: "Redis (OBSIRAG_REDIS_URL) ne répond pas : ObsiRAG réessaie en attendant son retour.",
    },
    "en": {
        RedisState.RESTARTING: "Redis is restarting… queued tasks wait; try again in a few seconds.",
        RedisState.UNREACHABLE: "Redis (OBSIRAG_REDIS_URL) does not answer: ObsiRAG keeps retrying until it is back.",
    },
}

STARTING = {
    "fr": "ObsiRAG démarre… l'indexeur n'est pas encore prêt ; réessaie dans quelques secondes.",
    "en": "ObsiRAG is starting… the indexer is not ready yet; try again in a few seconds.",
}


def supervisor_lock(settings: Settings) -> FileLock:
    """The data dir's lock, taken by ``obsirag up`` for its whole run; the file says which pid holds it."""
    return FileLock(settings.data_dir / LOCK_NAME, timeout=START_WAIT, preserve_lock_file=True, on_acquired=_write_pid)


def _write_pid(fd: int) -> None:
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())


def supervisor_alive(settings: Settings) -> bool:
    """Whether an ``obsirag up`` holds this data dir (one non-blocking try at its lock, released at once)."""
    path = settings.data_dir / LOCK_NAME
    if not path.exists():
        return False
    probe = FileLock(path, blocking=False, preserve_lock_file=True)
    try:
        probe.acquire()
    except Timeout:
        return True
    probe.release()
    return False


def redis_state(settings: Settings, answers: bool) -> RedisState:
    """What ``answers`` (did Redis just answer a ping?) means for this data dir."""
    if answers:
        return RedisState.READY
    if not supervisor_alive(settings):
        return RedisState.STOPPED
    private = settings.effective_redis_url == f"unix://{settings.redis_socket}"  # children get it as a URL
    return RedisState.RESTARTING if private else RedisState.UNREACHABLE


def redis_message(state: RedisState, lang: str = "en") -> str | None:
    """The one line every surface shows for ``state`` (None when Redis answers or nothing runs)."""
    return REDIS_MESSAGES[lang].get(state)
