"""The worker's published limits: the prompt budget follows its reading rate, the answer cap its decoding rate."""

from __future__ import annotations

from services.llm.prompt_cache import common_prefix
from services.llm.serving import DECODE_MARGIN, MIN_ANSWER_TOKENS, MIN_PROMPT_TOKENS, READ_MARGIN, Limits

LIMITS = Limits(context_tokens=4096, max_tokens=512, target_ttft_seconds=10.0, target_answer_seconds=60.0)


def test_a_fast_backend_gets_the_whole_context_and_answer() -> None:
    assert LIMITS.answer_tokens(decode_rate=100.0) == 512
    assert LIMITS.prompt_budget(prompt_rate=2000.0, decode_rate=100.0) == 4096 - 512


def test_a_slow_backend_gets_what_it_reads_within_the_target_but_never_below_the_floor() -> None:
    assert LIMITS.prompt_budget(prompt_rate=57.0, decode_rate=8.0) == int(10 * 57.0 * READ_MARGIN)
    assert LIMITS.prompt_budget(prompt_rate=4.0, decode_rate=1.5) == MIN_PROMPT_TOKENS
    assert LIMITS.answer_tokens(decode_rate=4.0) == int(50 * 4.0 * DECODE_MARGIN)  # 50 s after the first token
    assert LIMITS.answer_tokens(decode_rate=0.1) == MIN_ANSWER_TOKENS
    small = Limits(context_tokens=600, max_tokens=8)
    assert small.answer_tokens(decode_rate=0.1) == 8  # never more than asked
    assert small.prompt_budget(prompt_rate=1000.0, decode_rate=10.0) == 592  # the window still caps it


def test_common_prefix() -> None:
    assert common_prefix([1, 2, 3, 4], [1, 2, 9]) == 2
    assert common_prefix([], [1]) == 0
