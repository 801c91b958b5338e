"""Reuse of what the model already read: the KV caches of the last prompts (with their answers).

A follow-up in the same thread sends the earlier exchange verbatim, then its new question: its tokens
start like the previous request's prompt + answer, whose cache is taken back, cut to the common prefix,
and only the rest is read. A few slots, so a learner request in between does not evict the chat's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SLOTS = 2  # KV caches kept (the bundled model: ~46 KB per token; a 7B 4-bit one: ~60 KB)
MIN_REUSE = 32  # tokens in common below which a fresh cache is as good


@dataclass
class _Entry:
    tokens: list[int]
    cache: list[Any]


class PromptCache:
    def __init__(self, slots: int = SLOTS) -> None:
        self.slots = slots
        self._entries: list[_Entry] = []

    def take(self, model: Any, tokens: list[int]) -> tuple[list[Any], int]:
        """A cache for ``tokens`` and how many of their first tokens it already holds (the rest to read)."""
        from mlx_lm.models.cache import can_trim_prompt_cache, make_prompt_cache, trim_prompt_cache

        best, shared = None, 0
        for entry in self._entries:
            common = common_prefix(entry.tokens, tokens)
            if common > shared:
                best, shared = entry, common
        shared = min(shared, len(tokens) - 1)  # the model must read at least one token to answer
        if best is None or shared < MIN_REUSE or not can_trim_prompt_cache(best.cache):
            return make_prompt_cache(model), 0
        self._entries.remove(best)
        trim_prompt_cache(best.cache, cached_length(best.cache) - shared)
        return best.cache, shared

    def put(self, cache: list[Any], tokens: list[int]) -> None:
        """Keep ``cache``, which holds the first tokens of ``tokens`` (prompt + answer)."""
        from mlx_lm.models.cache import can_trim_prompt_cache, trim_prompt_cache

        held = cached_length(cache)
        if held > len(tokens):  # a last token fed but never returned (the end of turn)
            if not can_trim_prompt_cache(cache):
                return
            trim_prompt_cache(cache, held - len(tokens))
            held = len(tokens)
        self._entries.append(_Entry(tokens[:held], cache))
        del self._entries[: -self.slots]

    def clear(self) -> None:
        self._entries.clear()


def cached_length(cache: list[Any]) -> int:
    return int(getattr(cache[0], "offset", 0)) if cache else 0


def common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
