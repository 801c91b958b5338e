"""The reranker: a cross-encoder that reads the question beside each of the search's first notes (its best
passage, under its title) and orders them again (issue #33). Off by default: the user pulls one
(``obsirag model pull``) and chooses it (``obsirag model use``), which takes effect from the next search.

A bi-encoder such as e5 embeds the question and the passage apart; a cross-encoder reads them together, and
so tells a passage that answers from one that only shares the topic. It costs a forward pass per note: it
reads at most ``OBSIRAG_RERANK_NOTES`` (30) notes, the top of the fused list, and the search reports its
time (``timings_ms["rerank"]``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from services.choices import choices_stamp
from services.config import rechosen
from services.models.installed import local_folder

if TYPE_CHECKING:
    from sentence_transformers import CrossEncoder

    from services.config import Settings
    from services.retrieval.fusion import NoteHit

log = logging.getLogger(__name__)
BATCH = 16
MAX_TOKENS = 512  # question + passage; a cross-encoder's position table (BERT, XLM-R) holds 512


class Reranker(Protocol):
    name: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Each passage's relevance to ``query``, 0..1 (higher: more relevant)."""
        ...


class CrossEncoderReranker:
    """A sentence-transformers ``CrossEncoder`` from a folder, loaded on its first use."""

    def __init__(self, name: str, folder: Path, threads: int = 1) -> None:
        self.name = name
        self.folder = folder
        self.threads = threads
        self._model: CrossEncoder | None = None
        self._lock = threading.Lock()

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        model = self._load()
        scores = model.predict([(query, passage) for passage in passages], batch_size=BATCH, show_progress_bar=False)
        return [float(score) for score in scores]

    def _load(self) -> CrossEncoder:
        with self._lock:
            if self._model is None:
                import torch
                from sentence_transformers import CrossEncoder

                torch.set_num_threads(max(1, self.threads))
                folder = str(self.folder)  # on disk: never reach for a hub
                self._model = CrossEncoder(folder, device="cpu", max_length=MAX_TOKENS, local_files_only=True)
                log.info("reranker loaded: %s", self.name)
            return self._model


def open_reranker(model: str, cache: Path, threads: int = 1) -> CrossEncoderReranker | None:
    """The reranker ``model`` names (a hub id pulled into ``cache``, or a folder); None when it is empty or
    its files are not there (logged: the search goes on without it)."""
    if not model:
        return None
    folder = local_folder(cache, model) or Path(model).expanduser()
    if not (folder / "config.json").is_file():
        log.warning("reranker %s not found (pull it: obsirag model pull %s); searching without it", model, model)
        return None
    return CrossEncoderReranker(model, folder, threads)


class ChosenReranker:
    """The reranker in use now: the one the settings name, then each one ``obsirag model use`` chooses
    (``<data_dir>/models.json``, looked at once per search: a stat), unless a variable fixed it."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.notes = settings.rerank_notes
        self._stamp: tuple[int, int] | None = None
        self._model = settings.rerank_model
        self._reranker = open_reranker(self._model, settings.model_cache, settings.torch_threads)

    def current(self) -> Reranker | None:
        stamp = choices_stamp(self.settings.data_dir)
        if stamp != self._stamp:
            self._stamp = stamp
            self._follow()
        return self._reranker

    def _follow(self) -> None:
        model = rechosen(self.settings).rerank_model  # OBSIRAG_RERANK_MODEL (or a flag), when set, still decides
        if model != self._model:
            self._model = model
            self._reranker = open_reranker(model, self.settings.model_cache, self.settings.torch_threads)
            log.info("reranker now: %s", model or "none")


class RerankerSource(Protocol):
    """Where the search finds the reranker in use (``ChosenReranker``), and how many notes it reads."""

    notes: int

    def current(self) -> Reranker | None: ...


def cross_encode(
    reranker: Reranker, query: str, notes: list[NoteHit], keep: int
) -> tuple[list[NoteHit], dict[str, float]]:
    """``notes`` (best chunks read whole) ordered by the reranker's score of each one's title and best
    passage, the first ``keep``; and each note's score by path. Ties keep the fused order."""
    passages = [f"{note.best.hit.payload.get('title', '')}\n{note.best.hit.payload.get('text', '')}" for note in notes]
    scores = reranker.score(query, passages)
    ordered = sorted(zip(notes, scores, strict=True), key=lambda pair: -pair[1])[:keep]
    return [note for note, _ in ordered], {note.best.hit.payload["path"]: score for note, score in ordered}
