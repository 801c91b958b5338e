"""Memory by meaning: how close each confirmed fact is to a search query, answered by the indexer.

The chat's search asks for it (``SearchRequest.memory``) so that the query is embedded once, by the
indexer, for the notes and the facts alike. Each fact's sentence is embedded once: kept here by text,
and in the embedding cache across restarts (recorded as used by ``USES_PATH`` so that pruning keeps it).

Raw cosines say little for multilingual-e5-small (it rates any French question ~0.8 against any fact,
related or not); both sides are first centred on the mean of a few reference texts (``REFERENCE_*``,
embedded once per model and kept in the embedding cache: ~0.8 s of the processor at each indexer start
before, #34), which removes the direction every text shares (docs/architecture.md, memory).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np
from pydantic import BaseModel

from services.catalog import MemoryTable
from services.retrieval.embedding import Embedder, calibration
from services.retrieval.embedding_cache import EmbeddingCache, encode_cached

USES_PATH = "obsirag:memory"  # the embedding cache's "note" for the facts' sentences
REFERENCE_USES = ("obsirag:memory-reference-queries", "obsirag:memory-reference-passages")
MATCHES = 8  # facts returned per query, best first (the chat's budget keeps fewer)
# Everyday questions and facts, French first, about nothing in particular: their mean vectors are the
# direction every text shares. None of them is in bench or test pairs.
REFERENCE_QUERIES = (
    "Quand est prévue la prochaine réunion ?",
    "Comment faire une pâte brisée ?",
    "Qui a écrit ce livre ?",
    "Quel est le budget du projet ?",
    "Où ai-je rangé les factures ?",
    "Que faut-il acheter pour la semaine ?",
    "Quels sont mes objectifs cette année ?",
    "What did I read last month?",
    "How do I configure the server?",
    "Pourquoi le train était-il en retard ?",
    "Quelle est la date limite du rapport ?",
    "Qu'ai-je appris sur l'histoire de Rome ?",
    "Comment va ma famille ?",
    "Quels films voir ce week-end ?",
    "Combien coûte l'abonnement ?",
    "Who is in charge of the design?",
)
REFERENCE_PASSAGES = (
    "La réunion d'équipe a lieu le mardi à dix heures.",
    "moi — aime : les romans policiers",
    "Le serveur tourne sous Debian.",
    "Claire — est : ma collègue",
    "moi — habite : à Lyon",
    "La facture d'électricité arrive en fin de mois.",
    "moi — objectif : courir un semi-marathon",
    "The report is due on Friday.",
    "Le jardin a besoin d'arrosage en été.",
    "moi — travaille : comme ingénieure",
    "Les impôts se déclarent en mai.",
    "Marc — joue : du piano",
    "Le budget total est de 40 000 euros.",
    "I prefer meetings in the morning.",
    "Le livre raconte une vengeance.",
    "moi — a : deux chats",
)


class MemoryMatch(BaseModel):
    """A confirmed fact close to the query in meaning: its id and centred cosine (above the model's floor)."""

    fact_id: int
    cosine: float


class FactVectors:
    """The confirmed facts' vectors for one process; thread-safe (the indexer's search consumers share it)."""

    def __init__(self, memory: MemoryTable, cache: EmbeddingCache | None = None) -> None:
        self.memory = memory  # the confirmed facts: the catalog's memory tables alone
        self.cache = cache
        self._vectors: dict[tuple[str, str], np.ndarray] = {}  # (model, sentence) → centred unit vector
        self._means: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # model → (query mean, passage mean)
        self._recorded: frozenset[str] = frozenset()
        self._matrix: tuple[tuple[str, tuple[str, ...]], np.ndarray] | None = None
        self._lock = threading.Lock()

    def matches(
        self,
        embedder: Embedder,
        query_vector: Sequence[float],
        limit: int = MATCHES,
        topic: Callable[[], Sequence[float]] | None = None,
    ) -> list[MemoryMatch]:
        """The confirmed facts whose centred cosine with the query passes the model's ``memory_cosine`` and is
        within its ``memory_margin`` of the closest fact's; none for a model without a ``memory_cosine``.

        ``topic``: the query read with what it is about (its best note's title), embedded only when there are
        facts; a fact close to either counts (« que pourrais-je cuisiner ce soir ? » under « Menus de la
        semaine » is about food, which « je suis végétarien » bears on)."""
        cal = calibration(embedder.name)
        if cal.memory_cosine is None or not (facts := self.memory.confirmed_sentences()):
            return []
        cosines = self.cosines(embedder, query_vector, [text for _, text in facts])
        if topic is not None:
            cosines = np.maximum(cosines, self.cosines(embedder, topic(), [text for _, text in facts]))
        # A match is also close to the question's best one: a question about food lets in the closest food
        # fact, not every fact that mentions a meal (bench/memory_recall.py: 3 % of unrelated pairs → 0.8 %).
        floor = max(cal.memory_cosine, float(cosines.max()) - cal.memory_margin)
        best = sorted(zip(cosines.tolist(), facts, strict=True), key=lambda pair: pair[0], reverse=True)
        return [MemoryMatch(fact_id=fact_id, cosine=round(c, 4)) for c, (fact_id, _) in best[:limit] if c >= floor]

    def warm(self, embedder: Embedder) -> None:
        """Embed the reference texts and the confirmed facts now (the indexer's start), not during a chat."""
        if calibration(embedder.name).memory_cosine is None:
            return
        if facts := self.memory.confirmed_sentences():
            self._fact_vectors(embedder, [text for _, text in facts])
        else:
            self._reference(embedder)

    def cosines(self, embedder: Embedder, query_vector: Sequence[float], sentences: list[str]) -> np.ndarray:
        """Centred cosines between a query's vector (``embedder.encode_query``) and the fact sentences."""
        query_mean, _ = self._reference(embedder)
        query = _unit(np.asarray(query_vector, dtype=np.float32) - query_mean)
        return self._fact_vectors(embedder, sentences) @ query

    def _reference(self, embedder: Embedder) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            if embedder.name not in self._means:  # ~30 short texts, once per model: kept in the embedding cache
                queries = encode_cached(embedder, list(REFERENCE_QUERIES), self.cache, True, REFERENCE_USES[0])
                passages = encode_cached(embedder, list(REFERENCE_PASSAGES), self.cache, uses=REFERENCE_USES[1])
                self._means[embedder.name] = (queries.mean(axis=0), passages.mean(axis=0))
            return self._means[embedder.name]

    def _fact_vectors(self, embedder: Embedder, sentences: list[str]) -> np.ndarray:
        _, passage_mean = self._reference(embedder)
        key = (embedder.name, tuple(sentences))
        with self._lock:
            if self._matrix is not None and self._matrix[0] == key:  # the same facts as the last search
                return self._matrix[1]
            missing = [s for s in dict.fromkeys(sentences) if (embedder.name, s) not in self._vectors]
            if missing:
                for sentence, vector in zip(missing, self._encode(embedder, missing), strict=True):
                    self._vectors[embedder.name, sentence] = _unit(vector - passage_mean)
            self._record(embedder, sentences)
            matrix = np.vstack([self._vectors[embedder.name, s] for s in sentences])
            self._matrix = (key, matrix)
            return matrix

    def _encode(self, embedder: Embedder, sentences: list[str]) -> np.ndarray:
        return encode_cached(embedder, sentences, self.cache)  # a restart embeds no fact again

    def _record(self, embedder: Embedder, sentences: list[str]) -> None:
        """The cache keeps the current facts' vectors through its pruning (only when the set changed)."""
        current = frozenset(sentences)
        if self.cache is not None and self.cache.model == embedder.name and current != self._recorded:
            self.cache.record_uses(USES_PATH, sorted(current))
            self._recorded = current


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / max(float(np.linalg.norm(vector, axis=-1)), 1e-12)
