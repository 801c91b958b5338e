"""Tiny randomly initialised BERT models a test writes itself (no hub here): a cross-encoder (reranking) and
an encoder (embedding). Their scores mean nothing; loading, batching, timing, fallback and switching are real.
Deterministic: the same seed writes the same weights."""

from __future__ import annotations

import string
from pathlib import Path

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
LETTERS = string.ascii_lowercase + string.digits + "àâçéèêëîïôöùûü"


def write_tiny_bert(folder: Path, *, reranker: bool, seed: int = 0) -> Path:
    """A 2-layer, 32-wide BERT with a character vocabulary: a ``BertForSequenceClassification`` with one
    label (what sentence-transformers' ``CrossEncoder`` loads) or a bare ``BertModel`` (an embedder)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertModel, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    vocab = folder / "vocab.txt"
    pieces = [*SPECIAL, *LETTERS, *(f"##{c}" for c in LETTERS), *string.punctuation]
    vocab.write_text("\n".join(pieces) + "\n", encoding="utf-8")
    config = BertConfig(
        vocab_size=len(pieces),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=256,
        num_labels=1,
    )
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config) if reranker else BertModel(config)
    model.save_pretrained(folder)
    BertTokenizerFast(vocab_file=str(vocab), do_lower_case=True).save_pretrained(folder)
    return folder
