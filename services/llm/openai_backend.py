"""OpenAI-compatible backend: ``POST {base_url}/chat/completions`` with ``stream: true`` (Ollama, vLLM, llama.cpp).

The server applies the model's chat template; tokens arrive as server-sent events, ``data: {json}``
lines ending with ``data: [DONE]``. Usage comes from the last chunk when the server honours
``stream_options.include_usage``; otherwise each content chunk counts as one token.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import httpx

from services.llm.backend import NO_REPETITION_CONTROL, Backend, Decoding, PromptProgress, TokenCounts
from services.llm.models import ChatMessage

CONNECT_TIMEOUT = 5.0


class OpenAIServerError(RuntimeError):
    """The server answered with an error status or an error event."""


class OpenAIBackend(Backend):
    name = "openai"

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 300.0) -> None:
        super().__init__(model)
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self._client: httpx.Client | None = None

    @property
    def loaded(self) -> bool:
        return self._client is not None

    def load(self) -> None:
        if self._client is None:
            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            timeout = httpx.Timeout(self.timeout, connect=CONNECT_TIMEOUT)
            self._client = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout)

    def unload(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4) if text else 0  # the server's tokenizer is out of reach: an estimate

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
        assert self._client is not None
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.model_dump() for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if decoding.frequency_penalty:  # the server's own repetition control
            body["frequency_penalty"] = decoding.frequency_penalty
        if stop:
            body["stop"] = list(stop)
        pieces = 0
        with self._client.stream("POST", "/chat/completions", json=body) as response:
            if response.status_code >= 400:
                detail = response.read().decode(errors="replace")[:300]
                raise OpenAIServerError(f"{self.base_url} answered {response.status_code}: {detail}")
            for chunk in sse_chunks(response.iter_lines()):
                if usage := chunk.get("usage"):
                    counts.prompt_tokens = usage.get("prompt_tokens", 0)
                    counts.completion_tokens = usage.get("completion_tokens", 0)
                for choice in chunk.get("choices") or []:
                    counts.finish_reason = choice.get("finish_reason") or counts.finish_reason
                    if text := (choice.get("delta") or {}).get("content"):
                        pieces += 1
                        counts.completion_tokens = max(counts.completion_tokens, pieces)
                        yield text


def sse_chunks(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """The JSON payloads of ``data:`` lines, up to ``[DONE]``; an ``error`` payload raises."""
    for line in lines:
        if not line.startswith("data:"):
            continue  # blank separators, comments (": keep-alive"), "event:" lines
        data = line[len("data:") :].strip()
        if data == "[DONE]":
            return
        chunk = json.loads(data)
        if "error" in chunk:
            raise OpenAIServerError(f"server error: {chunk['error']}")
        yield chunk
