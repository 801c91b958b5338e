"""The local model hub for the session (no hub is reachable here): ``huggingface_hub`` reaches it through
``HF_ENDPOINT``. It serves a tiny cross-encoder, a tiny embedder and a plain 8 MB weight file, all written by
the tests, and the bundled chat model's converted files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.hub import Hub, serve_hub
from tests.support.tiny_models import write_tiny_bert

RERANKER = "obsirag-test/tiny-reranker"
EMBEDDER = "obsirag-test/tiny-embedder"
WEIGHTS = "obsirag-test/eight-megabytes"  # one big file: a pull can be killed halfway through it
CHAT = "obsirag-test/smollm2-135m"
SEED = "mlx-community/Qwen2.5-7B-Instruct-4bit"


@pytest.fixture(scope="session")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    from services.llm.bundled import ensure_converted
    from tests.support.generation import converted_model_cache

    root = tmp_path_factory.mktemp("hub")
    served = Hub()
    reranker = write_tiny_bert(root / "reranker", reranker=True)
    (reranker / "onnx").mkdir()
    (reranker / "onnx" / "model.onnx").write_bytes(b"\0" * 20_000)  # a format no backend reads: left on the hub
    served.add(RERANKER, reranker)
    served.add(EMBEDDER, write_tiny_bert(root / "embedder", reranker=False))
    weights = root / "weights"
    weights.mkdir()
    (weights / "config.json").write_text('{"architectures": ["LlamaForCausalLM"]}', encoding="utf-8")
    (weights / "model.safetensors").write_bytes(os.urandom(8_000_000))
    served.add(WEIGHTS, weights)
    served.add(SEED, weights)  # stands in for the 4.3 GB model proposed on Apple silicon (never loaded here)
    served.add(CHAT, ensure_converted(converted_model_cache()))  # converted once per machine, shared
    server = serve_hub(served)
    try:
        yield served
    finally:
        server.shutdown()


@pytest.fixture
def fresh_hub(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> Hub:
    """The session's hub at full speed, undamaged, its request log empty, and ``HF_ENDPOINT`` pointing at it."""
    hub.bytes_per_second, hub.damaged = None, set()
    hub.requests.clear()
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    return hub


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "models"
