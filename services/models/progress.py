"""A pull's progress, kept as a small JSON file in the model cache: the terminal that runs the pull writes it,
the dashboard and ``obsirag status`` read it (a pull outlives no terminal, but its file tells what happened)."""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

PULLS = "pulls"
RATE_WINDOW_SECONDS = 10.0  # the rate is the bytes of the last seconds: an ETA that follows the link's speed


class PullProgress(BaseModel):
    model: str
    state: Literal["sizing", "downloading", "verifying", "done", "failed"]
    done_bytes: int = 0
    total_bytes: int = 0
    bytes_per_s: float | None = None
    eta_s: float | None = None
    files: int = 0
    pid: int = 0
    started_at: float = 0.0
    updated_at: float = 0.0
    error: str | None = None

    @property
    def interrupted(self) -> bool:
        """Running by its file, but its process is gone (killed, or the machine slept): ``pull`` resumes it."""
        return self.state in ("sizing", "downloading", "verifying") and not _alive(self.pid)


class RateMeter:
    """Bytes per second over the last ``RATE_WINDOW_SECONDS``, from samples of the bytes done so far."""

    def __init__(self) -> None:
        self.samples: deque[tuple[float, int]] = deque()

    def add(self, done: int, now: float | None = None) -> float | None:
        now = time.monotonic() if now is None else now
        self.samples.append((now, done))
        while len(self.samples) > 2 and now - self.samples[0][0] > RATE_WINDOW_SECONDS:
            self.samples.popleft()
        (first_at, first), (last_at, last) = self.samples[0], self.samples[-1]
        return (last - first) / (last_at - first_at) if last_at > first_at else None


def progress_path(cache: Path, model: str) -> Path:
    return cache / PULLS / (re.sub(r"[^\w.-]+", "--", model) + ".json")


def write_progress(cache: Path, progress: PullProgress) -> None:
    folder = cache / PULLS
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(progress.model_dump_json())
    os.replace(temporary, progress_path(cache, progress.model))


def read_pulls(cache: Path) -> list[PullProgress]:
    """Every pull this cache remembers, newest first."""
    pulls = []
    for path in (cache / PULLS).glob("*.json"):
        try:
            pulls.append(PullProgress.model_validate(json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError, ValidationError):
            continue  # being replaced, or not ours
    return sorted(pulls, key=lambda pull: pull.updated_at, reverse=True)


def pull_under_way(cache: Path, model: str) -> bool:
    """Whether a pull of ``model`` runs now (not done, not failed, its process alive)."""
    return any(
        pull.model == model and pull.state not in ("done", "failed") and not pull.interrupted
        for pull in read_pulls(cache)
    )


def forget_pull(cache: Path, model: str) -> None:
    progress_path(cache, model).unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
