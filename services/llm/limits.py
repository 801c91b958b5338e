"""What one prompt may hold: the model's token budget, its tokenizer's count, safe estimates without it."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from services.config import Settings
from services.llm.bundled import is_bundled, ready_folder
from services.llm.models import WorkerState

CHARS_PER_TOKEN = 3.2  # conservative for French with small-vocabulary tokenizers
# Without the model's tokenizer: fewer characters per token than any note of the sample vault has with
# SmolLM2's (2.44 at worst, 2.7 typical for French), so a prompt counted this way is never too long.
SAFE_CHARS_PER_TOKEN = 2.3
MESSAGE_OVERHEAD_TOKENS = 8  # what the chat template adds around one message (role markers, newlines)
TokenCount = Callable[[str], int]


@dataclass(frozen=True)
class PromptLimits:
    """What one prompt may hold: published by the running generation worker, else this process's settings."""

    prompt_tokens: int  # read anew within the target time to first token (system prompt and history included)
    answer_tokens: int
    count: TokenCount  # the model's tokenizer when readable here, else a safe over-estimate
    window_tokens: int = 0  # the whole prompt, the part the model has cached included (context - answer)


def prompt_limits(settings: Settings, worker: WorkerState | None = None) -> PromptLimits:
    """The budget the worker publishes (its settings, its measured reading rate), or ours without one."""
    tokenizer = (worker.tokenizer_path if worker else None) or _bundled_tokenizer(settings)
    count = tokenizer_count(tokenizer) if tokenizer else safe_tokens
    if worker is not None and worker.prompt_budget is not None and worker.answer_tokens is not None:
        window = (worker.context_tokens or settings.llm_context_tokens) - worker.answer_tokens
        return PromptLimits(worker.prompt_budget, worker.answer_tokens, count, window)
    window = settings.llm_context_tokens - settings.llm_max_tokens
    return PromptLimits(window, settings.llm_max_tokens, count, window)


def _bundled_tokenizer(settings: Settings) -> str | None:
    if settings.llm_backend != "mlx" or not is_bundled(settings.llm_model):
        return None
    folder = ready_folder(settings.model_cache)  # converted by the worker
    return str(folder / "tokenizer.json") if folder else None


@functools.lru_cache(maxsize=4)
def tokenizer_count(path: str) -> TokenCount:
    """Exact token counts with the model's own tokenizer (``tokenizer.json``, Hugging Face tokenizers)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(Path(path)))
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


def safe_tokens(text: str) -> int:
    return int(len(text) / SAFE_CHARS_PER_TOKEN) + 1


def token_budget(settings: Settings, reserved_tokens: int = 300, limits: PromptLimits | None = None) -> int:
    """Context tokens left for excerpts once the answer and the prompt's own text are reserved.

    With ``limits``, what the worker's budget leaves (its prompt budget is never exceeded); without, this
    process's settings (at least 256 tokens).
    """
    if limits is not None:
        return max(0, limits.prompt_tokens - reserved_tokens)
    return max(256, settings.llm_context_tokens - settings.llm_max_tokens - reserved_tokens)


def estimate_tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + 1
