"""What the user's clicks taught the search: a question close in meaning to a recorded one finds its note.

A mark (``services/catalog/marks.py``) records a question against a note: opened from an answer or marked
« c'était ça » (the note comes first for close questions), or marked « pas ça » (it goes last). Closeness is
the cosine between the query's vector and the recorded question's, by the index's model; e5 puts every pair
of questions above ~0.75, so the threshold was measured on paraphrases against other questions
(``bench/learning.py``). The marks live in the vault's own catalog: another vault never sees them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from services.catalog.marks import MarksTable
from services.catalog.models import Verdict
from services.retrieval.embedding import Embedder
from services.retrieval.fusion import NoteHit

# multilingual-e5-small: a recorded question closer than THRESHOLD adds WEIGHT × (cosine − THRESHOLD) to its
# note's rank (« pas ça »: takes it away). Question against question alone tells one need from another badly
# (the right recorded question is the closest for a third of the Obsidian Help set's second paraphrases), so
# the mark adds to the note's own evidence rather than overriding it: on that set, recall@5 of the second
# paraphrases 0.48 → 0.80 (threshold and weight chosen on that half; the other half, held out, 0.56 → 0.76),
# the set's 70 other questions unchanged at 0.814 (bench/learning.py).
THRESHOLD = 0.85
WEIGHT = 8.0
POOL = 30  # notes ranked before the marks reorder them (a marked note outside is read from the store)


@dataclass(frozen=True)
class Learned:
    """A recorded question close to the query: its note, what the click said, how close it is."""

    path: str
    verdict: Verdict
    similarity: float

    @property
    def pulls(self) -> bool:
        return self.verdict != Verdict.NO

    def shift(self, threshold: float, weight: float) -> float:
        """What the mark adds to its note's rank (negative for « pas ça »)."""
        return weight * (self.similarity - threshold) * (1.0 if self.pulls else -1.0)


class LearnedMarks:
    """The marks' question vectors in memory (reloaded when the marks change), matched against queries."""

    def __init__(self, marks: MarksTable, threshold: float = THRESHOLD, weight: float = WEIGHT) -> None:
        self.marks = marks
        self.threshold = threshold
        self.weight = weight
        self._lock = threading.Lock()
        self._loaded: tuple[str, str] | None = None  # (revision, model) of what is in memory
        self._notes: list[tuple[str, Verdict]] = []
        self._matrix = np.zeros((0, 0), dtype=np.float32)

    def close_to(self, embedder: Embedder, vector: Sequence[float]) -> list[Learned]:
        """One entry per note whose closest recorded question is above the threshold, closest first."""
        with self._lock:
            self._refresh(embedder)
            notes, matrix = self._notes, self._matrix
        if not notes:
            return []
        similarities = matrix @ _unit(np.asarray(vector, dtype=np.float32))
        found: dict[str, Learned] = {}
        for index in np.argsort(-similarities):
            if similarities[index] < self.threshold:
                break
            path, verdict = notes[index]
            found.setdefault(path, Learned(path, verdict, float(similarities[index])))
        return list(found.values())

    def _refresh(self, embedder: Embedder) -> None:
        key = (self.marks.marks_revision(), embedder.name)
        if key == self._loaded:
            return
        notes, vectors = [], []
        for mark, vector in self.marks.mark_vectors(embedder.name):
            if vector is None:  # recorded by the web, or by another model: embedded once, here
                vector = _unit(np.asarray(embedder.encode_query(mark.question), dtype=np.float32))
                self.marks.set_mark_vector(mark.id or 0, embedder.name, vector)
            notes.append((mark.path, mark.verdict))
            vectors.append(vector)
        self._notes = notes
        self._matrix = np.vstack(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)
        self._loaded = key


def rerank(
    notes: list[NoteHit], close: list[Learned], outside: Callable[[str], NoteHit | None], learned: LearnedMarks, k: int
) -> tuple[list[NoteHit], set[str]]:
    """The first ``k`` notes once the close marks moved theirs, and the paths they moved. Each place keeps its
    score (the guard's evidence: the best score, the margin to the second), so that an order by score (the
    chat's) keeps the new order."""
    by_path = {note.best.hit.payload["path"]: note for note in notes}
    floor = min((note.rank for note in notes), default=0.0)
    moved = set()
    for one in close:
        note = by_path.get(one.path) or (outside(one.path) if one.pulls else None)
        if note is None:
            continue
        if one.path not in by_path:
            note.rank, by_path[one.path] = floor, note
        note.rank += one.shift(learned.threshold, learned.weight)
        moved.add(one.path)
    places = sorted((note.score for note in notes[:k]), reverse=True)
    ordered = sorted(by_path.values(), key=lambda note: -note.rank)[:k]
    for note, score in zip(ordered, places, strict=False):
        note.score = score
    return ordered, moved


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / max(float(np.linalg.norm(vector)), 1e-12)
