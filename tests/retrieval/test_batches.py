"""Encode batches: similar lengths together, under a token budget, every text once."""

from __future__ import annotations

import random

from services.retrieval.batches import length_batches


def _counts() -> list[int]:
    rng = random.Random(5)
    return [rng.choice([12, 40, 180, 200, 210, 480, 900]) for _ in range(120)]


def test_every_text_once_within_size_and_budget() -> None:
    counts = _counts()
    batches = length_batches(counts, max_size=32, max_tokens=1024)
    assert sorted(i for batch in batches for i in batch) == list(range(len(counts)))
    for batch in batches:
        longest = max(counts[i] for i in batch)
        assert len(batch) <= 32
        assert len(batch) == 1 or len(batch) * longest <= 1024  # a text over the budget goes alone
    assert [i for batch in batches for i in batch if counts[i] == 900] == [
        batch[0] for batch in batches if counts[batch[0]] == 900
    ]
    titles = [batch for batch in batches if max(counts[i] for i in batch) == 12]
    assert len(titles) == 1  # the short texts (17) in one batch


def test_similar_lengths_share_a_batch() -> None:
    counts = [200, 12, 210, 12, 205, 12, 12, 198]
    batches = length_batches(counts, max_size=4, max_tokens=1024)
    assert sorted(map(sorted, batches)) == [[0, 2, 4, 7], [1, 3, 5, 6]]


def test_without_a_budget_only_the_size_bounds_a_batch() -> None:
    # A server's batches (the OpenAI-compatible embedder): one request per batch_size texts.
    counts = [480] * 10
    assert sorted(map(len, length_batches(counts, max_size=8, max_tokens=None))) == [2, 8]
    assert max(map(len, length_batches(counts, max_size=8, max_tokens=1024))) == 2
