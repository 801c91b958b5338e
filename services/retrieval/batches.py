"""Texts cut into encode batches of similar length, under a token budget.

On CPU a transformer pads every text of a batch to the batch's longest, and a padded token costs as much as a
real one; the attention's memory grows with rows × width². Two rules, measured on the e5 model and a vault's
chunks (bench/vault_scale.py; docs/performance.md, « A vault at scale »): texts of similar length together,
and at most ``BATCH_TOKENS`` padded tokens per batch. Batches of ~1,000 tokens (four 200-token chunks) encode
faster than batches of 32 (cache-sized matrices: +16 %) and never hold the ~1 GB of activations a batch of
32 long chunks needs, which glibc kept for good.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# What one forward pass of the embedding model costs on top of its tokens, counted in padded tokens
# (~12 ms for all-MiniLM-L6-v2 on one CPU thread, where a token costs ~0.3 ms; bench/index_throughput.py).
BATCH_COST_TOKENS = 48
BATCH_TOKENS = 1024  # padded tokens per batch (rows × longest) for a model run on this machine's CPU


def length_batches(
    token_counts: Sequence[int],
    max_size: int,
    max_tokens: int | None = BATCH_TOKENS,
    batch_cost: int = BATCH_COST_TOKENS,
) -> list[list[int]]:
    """Indices of ``token_counts`` cut into batches of at most ``max_size`` texts of similar length, each at most
    ``max_tokens`` padded tokens (one text longer than that alone; ``None``: no budget, a server's batches).

    Longest first, the cheapest cut into contiguous batches (size × longest + ``batch_cost`` each) is a small
    dynamic programme.
    """
    order = sorted(range(len(token_counts)), key=lambda i: -token_counts[i])
    best = [0.0] + [math.inf] * len(order)  # best[end]: cheapest cost of order[:end]
    cut = [0] * (len(order) + 1)
    for end in range(1, len(order) + 1):
        for start in range(end - 1, max(0, end - max_size) - 1, -1):
            padded = (end - start) * token_counts[order[start]]
            if end - start > 1 and max_tokens is not None and padded > max_tokens:
                break  # a longer batch only grows (longest first)
            cost = best[start] + padded + batch_cost
            if cost < best[end]:
                best[end], cut[end] = cost, start
    batches: list[list[int]] = []
    end = len(order)
    while end:
        batches.append(order[cut[end] : end])
        end = cut[end]
    return batches[::-1]
