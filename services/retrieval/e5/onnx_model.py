"""multilingual-e5-small run by ONNX Runtime, on the same float32 weights as ``torch_model``.

A query is a batch of one short text: a dozen matrix products of 10–30 rows per layer, where torch's CPU
kernels (MKL) spend most of a query's time. ONNX Runtime's (MLAS) run the same graph's products in about half
of it on one thread, and a note's passages at 1.33× torch's rate (``bench/e5_onnx.py``), with the same vectors
(least cosine to torch's 0.99999).

The graph (``onnx_graph``, 30 kB: the weights stay outside it) is written once into the model cache: building
it imports ``onnx``, whose ``ml_dtypes`` takes a second to load, at each start otherwise.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from services.retrieval.e5.cached import cached_bytes, file_tag
from services.retrieval.e5.weights import E5Weights

_GRAPH_SOURCE = Path(__file__).with_name("onnx_graph.py")  # its text names the cached graph: an edit, a new one


class OnnxE5:
    """Encode token ids (``TorchE5.token_ids``) with ``threads`` threads; thread-safe."""

    def __init__(self, weights: E5Weights, threads: int = 1, cache: Path | None = None) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # idle threads leave the core
        named = weights.named()
        # The session reads the weights from the arrays (no serialized copy); they outlive it (``self.weights``).
        options.add_external_initializers(list(named), [ort.OrtValue.ortvalue_from_numpy(a) for a in named.values()])
        self.weights = weights
        self._session = ort.InferenceSession(_graph(weights, cache), options, providers=["CPUExecutionProvider"])

    def encode_ids(self, ids: Sequence[Sequence[int]]) -> np.ndarray:
        """One batch of token ids → L2-normalised mean-pooled vectors (batch × hidden)."""
        weights = self.weights
        # Padded to the longest text only: unlike torch (``WIDTH_STEP``), ONNX Runtime's arena keeps no memory
        # per shape (300 batches of random widths: resident flat), and the padding's work is saved (×1.12).
        grid = weights.token_grid(ids, step=1)
        mask = grid != weights.file.pad
        blocked = np.where(mask, 0.0, -np.inf).astype(np.float32)[:, None, None, :]
        embedded = weights.embedded(grid).astype(np.float32, copy=False)
        (hidden,) = self._session.run(None, {"embedded": embedded, "mask": blocked})
        pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def _graph(weights: E5Weights, cache: Path | None) -> bytes:
    version = hashlib.sha1(_GRAPH_SOURCE.read_bytes()).hexdigest()[:12]
    name = f"e5-encoder-{version}-{file_tag(weights.file.path)}.onnx"

    def build() -> bytes:
        from services.retrieval.e5.onnx_graph import encoder_graph

        return encoder_graph(weights).SerializeToString()

    return cached_bytes(cache, name, build)
