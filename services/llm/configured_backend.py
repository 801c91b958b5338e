"""The backend a setting names: the mlx-lm model in this process, or an OpenAI-compatible server."""

from __future__ import annotations

from services.config import Settings
from services.llm.backend import Backend, Decoding
from services.llm.bundled import is_bundled, note_old_copy
from services.llm.mlx_backend import MLXBackend
from services.llm.openai_backend import OpenAIBackend


def open_backend(settings: Settings) -> Backend:
    """The backend ``settings.llm_backend`` names, with the settings' repetition control; nothing is loaded yet."""
    backend: Backend
    if settings.llm_backend == "openai":
        if not settings.llm_base_url:
            raise ValueError("OBSIRAG_LLM_BASE_URL is required with OBSIRAG_LLM_BACKEND=openai")
        backend = OpenAIBackend(
            settings.llm_base_url, settings.llm_model, settings.llm_api_key, settings.llm_timeout_seconds
        )
    else:
        if is_bundled(settings.llm_model):
            note_old_copy(settings)
        backend = MLXBackend(settings.llm_model, settings.model_cache, settings.llm_blas, settings.llm_blas_threads)
    backend.decoding = decoding(settings)
    return backend


def decoding(settings: Settings) -> Decoding:
    return Decoding(
        repetition_penalty=settings.llm_repetition_penalty, frequency_penalty=settings.llm_frequency_penalty
    )
