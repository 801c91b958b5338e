"""A rebuild's record beside the store (``services.indexing.rebuild``): its progress in ``rebuild.json``, the notes
it did in ``rebuild-notes.jsonl``. Read by ``obsirag status`` and the dashboard without the indexer.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

from pydantic import BaseModel, Field

from services.config import Language
from services.language.durations import short_duration
from services.retrieval.store.edge_folder import NEXT_DIR

PROGRESS_FILE = "rebuild.json"
NOTES_FILE = "rebuild-notes.jsonl"  # ["path", "content hash"] per note done ("" skipped/gone); the last line wins


class RebuildProgress(BaseModel):
    """What ``obsirag status`` and the dashboard show of a rebuild in progress."""

    model: str
    total: int
    done: int
    started_at: float
    eta_seconds: float | None = None
    building_graphs: bool = False  # every note done: the next index's search graphs are being built

    def line(self, lang: Language = "en") -> str:
        """``obsirag status``'s line for it."""
        left = short_duration(self.eta_seconds) if self.eta_seconds is not None else ""
        if lang == "fr":
            eta = f", encore environ {left}" if left else ""
            graphs = ", construction de ses graphes de recherche" if self.building_graphs else ""
            return f"reconstruction de l'index avec {self.model} : {self.done}/{self.total} notes{eta}{graphs}"
        eta = f", about {left} left" if left else ""
        graphs = ", building its search graphs" if self.building_graphs else ""
        return f"rebuilding the index with {self.model}: {self.done}/{self.total} notes{eta}{graphs}"


class RebuildState(BaseModel):
    model: str
    started_at: float
    total: int = 0
    done: int = 0  # notes done: their hashes are in NOTES_FILE
    # An earlier version's record of the notes done (note → content hash), read when it resumes such a rebuild.
    hashes: dict[str, str] = Field(default_factory=dict, exclude=True)
    embedded: int = 0  # chunks the model encoded for this rebuild (the others came from the cache)
    resumed_done: int = 0  # notes done before the last (re)start: the ETA measures this run only
    resumed_at: float = 0.0
    building_graphs: bool = False


def read_state(store_path: Path) -> RebuildState | None:
    try:
        return RebuildState.model_validate(
            json.loads((store_path / NEXT_DIR / PROGRESS_FILE).read_text(encoding="utf-8"))
        )
    except (FileNotFoundError, ValueError):
        return None


def read_notes(notes_file: Path) -> dict[str, str]:
    """The notes a rebuild did and their hashes; a line cut short by a crash is left out (its step is redone)."""
    hashes: dict[str, str] = {}
    try:
        lines = notes_file.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return hashes
    for line in lines:
        with contextlib.suppress(ValueError):
            path, digest = json.loads(line)
            hashes[path] = digest
    return hashes


def read_progress(store_path: Path, now: float | None = None) -> RebuildProgress | None:
    """The rebuild under way beside the store, read from its file (no lock, no process needed)."""
    state = read_state(store_path)
    return progress_of(state, now) if state is not None else None


def progress_of(state: RebuildState, now: float | None = None) -> RebuildProgress:
    done = max(state.done, len(state.hashes))
    total = max(state.total, done)
    elapsed, this_run = (now or time.time()) - state.resumed_at, done - state.resumed_done
    eta = (total - done) * elapsed / this_run if this_run > 0 and not state.building_graphs else None
    return RebuildProgress(
        model=state.model,
        total=total,
        done=done,
        started_at=state.started_at,
        eta_seconds=eta,
        building_graphs=state.building_graphs,
    )
