"""MLX backend: ``mlx_lm.load`` + ``mlx_lm.stream_generate`` in this process (Apple GPU, or CPU on Linux)."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from services.llm.backends import Backend, TokenCounts
from services.llm.bundled import ensure_converted, is_bundled
from services.llm.models import ChatMessage

log = logging.getLogger(__name__)


def prefer_system_blas() -> str | None:
    """On Linux, make MLX's matrix products use the system's OpenBLAS when one is installed.

    The mlx-cpu wheel links a slow reference BLAS. Loading OpenBLAS globally *before* MLX's library
    makes MLX bind ``cblas_sgemm`` to it: ~10x faster prompt processing, ~2x faster decoding, same
    tokens (measured on SmolLM2-135M). Debian: ``apt-get install libopenblas0-pthread``. No effect once
    MLX is imported, nor on macOS (Accelerate + Metal). Returns the library used, if any.
    """
    if sys.platform != "linux" or "mlx.core" in sys.modules:
        return None
    name = ctypes.util.find_library("openblas")
    if name is None:
        return None
    try:
        ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
    except OSError as exc:
        log.warning("could not load %s (%s): MLX keeps its reference BLAS", name, exc)
        return None
    return name


def resolve_model(model: str, cache: Path) -> str:
    """A folder ``mlx_lm.load`` reads: the bundled model (converted once), a local folder, or a hub id."""
    if is_bundled(model):
        return str(ensure_converted(cache))
    folder = Path(model).expanduser()
    return str(folder.resolve()) if folder.is_dir() else model


class MLXBackend(Backend):
    name = "mlx"

    def __init__(self, model: str, cache: Path) -> None:
        super().__init__(model)
        self.cache = cache
        self._model: Any = None
        self._tokenizer: Any = None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        if self.loaded:
            return
        if blas := prefer_system_blas():
            log.info("MLX uses %s", blas)
        import mlx_lm

        self._model, self._tokenizer = mlx_lm.load(resolve_model(self.model, self.cache))
        log.info("loaded %s", self.model)

    def unload(self) -> None:
        if not self.loaded:
            return
        import mlx.core as mx

        self._model = self._tokenizer = None
        gc.collect()
        mx.clear_cache()
        log.info("unloaded %s", self.model)

    def count_tokens(self, text: str) -> int:
        self.load()
        return len(self._tokenizer.encode(text, add_special_tokens=False))

    def prompt(self, messages: Sequence[ChatMessage]) -> str:
        """The model's own chat template, ending with the assistant's turn."""
        self.load()
        turns = [m.model_dump() for m in messages]
        return self._tokenizer.apply_chat_template(turns, add_generation_prompt=True, tokenize=False)

    def _generate(
        self,
        messages: list[ChatMessage],
        max_tokens: int,
        temperature: float,
        stop: Sequence[str],
        counts: TokenCounts,
    ) -> Iterator[str]:
        from mlx_lm import stream_generate
        from mlx_lm.sample_utils import make_sampler

        sampler = make_sampler(temp=temperature)  # 0 → argmax: deterministic
        responses = stream_generate(self._model, self._tokenizer, self.prompt(messages), max_tokens, sampler=sampler)
        try:
            for response in responses:
                counts.prompt_tokens = response.prompt_tokens
                counts.completion_tokens = response.generation_tokens
                counts.finish_reason = response.finish_reason or counts.finish_reason
                if response.text:
                    yield response.text
        finally:
            responses.close()
