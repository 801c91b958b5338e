"""MLX backend: ``mlx_lm.load`` + ``mlx_lm.stream_generate`` in this process (Apple GPU, or CPU on Linux)."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from services.llm.backend import NO_REPETITION_CONTROL, Backend, Decoding, PromptProgress, TokenCounts
from services.llm.bundled import ensure_converted, is_bundled
from services.llm.models import ChatMessage
from services.llm.prompt_cache import PromptCache
from services.models.installed import local_folder

log = logging.getLogger(__name__)


BlasChoice = Literal["auto", "mkl", "openblas", "reference"]
# The threading library's variable for each choice: one thread reads prompts fastest on a shared 2-core box.
_THREAD_VARIABLES = {"mkl": "MKL_NUM_THREADS", "openblas": "OPENBLAS_NUM_THREADS"}


# (prompt, decode) tokens/s of the bundled model with MKL or OpenBLAS on a loaded 2-core box: a fresh
# worker's guess until it has measured its own.
FAST_BLAS_ESTIMATES = (40.0, 4.0)


def mkl_library(prefix: str | None = None) -> Path | None:
    """``libmkl_rt`` as PyPI's ``mkl`` wheel installs it, in the environment's own ``lib/`` (no root needed)."""
    found = sorted(Path(prefix or sys.prefix, "lib").glob("libmkl_rt.so*"))
    return found[0] if found else None


def openblas_library() -> str | None:
    """The system's OpenBLAS (Debian: ``apt-get install libopenblas0-pthread``)."""
    return ctypes.util.find_library("openblas")


_bound: str | None = None  # the library loaded before MLX in this process


def prefer_fast_blas(choice: BlasChoice = "auto", threads: int = 1) -> str | None:
    """On Linux, make MLX's matrix products use a fast BLAS instead of the mlx-cpu wheel's reference one.

    Loading a CBLAS library globally *before* MLX's own makes MLX bind ``cblas_sgemm`` to it. ``auto``
    takes MKL from the ``mkl`` wheel when installed, else a system OpenBLAS: MKL read prompts ~2.5x
    faster than OpenBLAS and ~12x faster than the reference BLAS here, same tokens (docs/performance.md).
    ``threads`` sets the library's thread count unless its variable is already set. No effect once MLX
    is imported, nor on macOS (Accelerate + Metal). Returns the library MLX uses, if one was loaded.
    """
    global _bound
    if "mlx.core" in sys.modules:  # MLX keeps what was bound before its import (another worker in-process)
        return _bound
    if sys.platform != "linux" or choice == "reference":
        return None
    candidates: list[tuple[str, str | Path | None]] = []
    if choice in ("auto", "mkl"):
        candidates.append(("mkl", mkl_library()))
    if choice in ("auto", "openblas"):
        candidates.append(("openblas", openblas_library()))
    for kind, library in candidates:
        if library is None:
            continue
        os.environ.setdefault(_THREAD_VARIABLES[kind], str(threads))
        try:
            ctypes.CDLL(str(library), mode=ctypes.RTLD_GLOBAL)
        except OSError as exc:
            log.warning("could not load %s (%s)", library, exc)
            continue
        _bound = str(library)
        return _bound
    return None


def answer_penalty(decoding: Decoding, prompt_tokens: int) -> Callable[[Any, Any], Any]:
    """mlx-lm's repetition penalty over the answer's own tokens only: the excerpts' words in the prompt are
    what an answer should repeat (mlx-lm's processors see the prompt's tokens too)."""
    from mlx_lm.sample_utils import make_repetition_penalty

    penalise = make_repetition_penalty(decoding.repetition_penalty, decoding.repetition_context)
    return lambda tokens, logits: penalise(tokens[prompt_tokens:], logits)


def _decoding_options(decoding: Decoding, prompt_tokens: int, prompt_step: int | None) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if decoding.repetition_penalty != 1.0:  # a token the answer just wrote weighs less: no loop at temperature 0
        options["logits_processors"] = [answer_penalty(decoding, prompt_tokens)]
    if prompt_step:  # pieces of the prompt: between two, the caller may stop the generation
        options["prefill_step_size"] = prompt_step
    return options


def resolve_model(model: str, cache: Path) -> str:
    """A folder ``mlx_lm.load`` reads: the bundled model (converted once), a hub id pulled into the model
    cache (``obsirag model pull``), a local folder, or a hub id (which mlx-lm then downloads itself)."""
    if is_bundled(model):
        return str(ensure_converted(cache))
    if pulled := local_folder(cache, model):
        return str(pulled)
    folder = Path(model).expanduser()
    return str(folder.resolve()) if folder.is_dir() else model


class MLXBackend(Backend):
    name = "mlx"
    local = True
    prompt_rate_estimate = 1000.0 if sys.platform == "darwin" else 4.0  # Metal; the reference CPU BLAS
    decode_rate_estimate = 25.0 if sys.platform == "darwin" else 1.5

    def __init__(self, model: str, cache: Path, blas: BlasChoice = "auto", blas_threads: int = 1) -> None:
        super().__init__(model)
        self.cache = cache
        self.blas_choice = blas
        self.blas_threads = blas_threads
        if sys.platform == "linux" and blas != "reference" and (mkl_library() or openblas_library()):
            self.prompt_rate_estimate, self.decode_rate_estimate = FAST_BLAS_ESTIMATES
        self._model: Any = None
        self._tokenizer: Any = None
        self.prompt_cache = PromptCache()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        if self.loaded:
            return
        if blas := prefer_fast_blas(self.blas_choice, self.blas_threads):
            self.blas = blas
            log.info("MLX uses %s", blas)
        import mlx_lm

        folder = resolve_model(self.model, self.cache)
        self._model, self._tokenizer = mlx_lm.load(folder)
        tokenizer_file = Path(folder, "tokenizer.json")
        self.tokenizer_path = str(tokenizer_file) if tokenizer_file.is_file() else None
        log.info("loaded %s", self.model)

    def unload(self) -> None:
        if not self.loaded:
            return
        import mlx.core as mx

        self._model = self._tokenizer = None
        self.prompt_cache.clear()
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

    def prompt_tokens(self, messages: Sequence[ChatMessage]) -> list[int]:
        """The prompt's token ids, as ``stream_generate`` would encode its text."""
        text, bos = self.prompt(messages), self._tokenizer.bos_token
        return self._tokenizer.encode(text, add_special_tokens=bos is None or not text.startswith(bos))

    def _generate(
        self,
        messages: list[ChatMessage],
        max_tokens: int,
        temperature: float,
        stop: Sequence[str],
        counts: TokenCounts,
        on_prompt: PromptProgress | None = None,
        prompt_step: int | None = None,
        decoding: Decoding = NO_REPETITION_CONTROL,
    ) -> Iterator[str]:
        from mlx_lm import stream_generate
        from mlx_lm.sample_utils import make_sampler

        def progress(read: int, total: int) -> None:
            counts.prompt_tokens = total + counts.cached_tokens  # known even if it stops before a token
            if on_prompt is not None:
                on_prompt(read, total)

        tokens = self.prompt_tokens(messages)
        cache, reused = self.prompt_cache.take(self._model, tokens)
        counts.cached_tokens = reused
        options: dict[str, Any] = {"sampler": make_sampler(temp=temperature), "prompt_progress_callback": progress}
        options |= _decoding_options(decoding, len(tokens) - reused, prompt_step) | {"prompt_cache": cache}
        responses = stream_generate(self._model, self._tokenizer, tokens[reused:], max_tokens, **options)
        generated: list[int] = []
        try:
            for response in responses:
                generated.append(response.token)
                counts.prompt_tokens = len(tokens)
                counts.completion_tokens = response.generation_tokens
                counts.finish_reason = response.finish_reason or counts.finish_reason
                if response.text:
                    yield response.text
        finally:
            responses.close()
            self.prompt_cache.put(cache, tokens + generated)
