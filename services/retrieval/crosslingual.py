"""English questions over French notes: what keeps the vault's few English notes from pulling them.

Two pulls, both measured on the sample vault (bench/cross_lingual.py, docs/performance.md, "Cross-lingual").
The lexical one: an English question's common words ("keeping", "what", "much") are rare in a French vault, so
BM25 rates them high and they match the English notes. They are left out of its lexical query (spaCy's English
stop words, what the entity extractor already reads), and when the lexical list's best hit is itself English,
the list weighs what that hit holds of the question (``query_terms.coverage``); a French best hit, met by names and
technical words, keeps its weight (weighing it too cost the help vault's English questions recall@5 0.763 →
0.712). The dense one: the direction in a multilingual model's space that says "English, not French", taken
out of an English question's vector.
"""

from __future__ import annotations

import importlib.util
import runpy
import threading
from functools import cache
from pathlib import Path

import numpy as np

from services.retrieval import lexical
from services.retrieval.embedding import Embedder
from services.retrieval.embedding_cache import EmbeddingCache, encode_cached


# Analysed like the notes (Snowball French), so "keeping" meets "keep"; stems a French note could share
# ("part", "call", "name"…) only leave an English question's lexical query, never a French one's.
@cache
def english_common() -> frozenset[str]:
    """spaCy's English stop words, analysed as the lexical list analyses words."""
    return frozenset(lexical.analyze(" ".join(sorted(_spacy_english_stop_words()))))


def _spacy_english_stop_words() -> set[str]:
    """Read from spaCy's data module alone: importing spaCy (thinc, its registries) cost the first English
    search 0.6 s of the processor, and the web and the learner processes, which import the search, never need
    it. Another layout of the package: the module imported as usual."""
    spec = importlib.util.find_spec("spacy")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        data = Path(folder) / "lang" / "en" / "stop_words.py"
        if data.is_file():
            return set(runpy.run_path(str(data))["STOP_WORDS"])
    from spacy.lang.en.stop_words import STOP_WORDS

    return set(STOP_WORDS)


PAIRS = (
    ("How do I keep my plants alive during the winter?", "Comment garder mes plantes en vie pendant l'hiver ?"),
    ("What time does the train to Lyon leave?", "À quelle heure part le train pour Lyon ?"),
    ("Who is in charge of the budget this year?", "Qui s'occupe du budget cette année ?"),
    ("Which books did I read last summer?", "Quels livres ai-je lus l'été dernier ?"),
    ("How long should the meat rest after cooking?", "Combien de temps la viande doit-elle reposer après la cuisson ?"),
    ("What did we decide at the last meeting?", "Qu'avons-nous décidé à la dernière réunion ?"),
    ("Where did I put the spare keys?", "Où ai-je rangé les clés de secours ?"),
    ("Why does the server restart every night?", "Pourquoi le serveur redémarre-t-il chaque nuit ?"),
    ("How much does the renovation of the kitchen cost?", "Combien coûte la rénovation de la cuisine ?"),
    ("What are the side effects of this medicine?", "Quels sont les effets secondaires de ce médicament ?"),
    ("When is my sister's birthday?", "Quand est l'anniversaire de ma sœur ?"),
    ("How can I improve my sleep?", "Comment puis-je mieux dormir ?"),
    ("What is the main argument of the essay?", "Quel est l'argument principal de l'essai ?"),
    ("Which neighbourhoods are the hottest in summer?", "Quels quartiers sont les plus chauds en été ?"),
    ("How do I back up my phone?", "Comment sauvegarder mon téléphone ?"),
    ("What should I pack for the hiking trip?", "Que dois-je emporter pour la randonnée ?"),
)

AXIS_USES = "obsirag:english-axis"  # the embedding cache's "note" for the pairs' vectors
_AXES: dict[str, np.ndarray] = {}
_LOCK = threading.Lock()


def english_axis(embedder: Embedder, cache: EmbeddingCache | None = None) -> np.ndarray:
    """The unit vector from the French questions' mean to the English ones' (computed once per model: the
    questions' vectors kept in ``cache``, 32 queries cost the first English search ~0.8 s of the processor)."""
    with _LOCK:
        if embedder.name not in _AXES:
            texts = [en for en, _ in PAIRS] + [fr for _, fr in PAIRS]
            vectors = encode_cached(embedder, texts, cache, queries=True, uses=AXIS_USES)
            axis = vectors[: len(PAIRS)].mean(axis=0) - vectors[len(PAIRS) :].mean(axis=0)
            _AXES[embedder.name] = axis / max(float(np.linalg.norm(axis)), 1e-12)
        return _AXES[embedder.name]


def without_language(vector: list[float], axis: np.ndarray) -> list[float]:
    """``vector`` with its component along ``axis`` taken out, normalised again."""
    query = np.asarray(vector, dtype=np.float32)
    query = query - float(query @ axis) * axis
    return (query / max(float(np.linalg.norm(query)), 1e-12)).tolist()
