"""OpenAI-compatible servers already running on this machine (issue #33, point 3): Ollama, LM Studio,
llama.cpp's ``llama-server`` and vLLM answer ``GET /v1/models`` on their usual ports. They are looked for on
127.0.0.1 only (the URL is built here, never taken from elsewhere), listed with their models, and used only
when the user points ObsiRAG at one (``OBSIRAG_LLM_BACKEND=openai``, ``OBSIRAG_LLM_BASE_URL``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

import httpx
from pydantic import BaseModel

LOOPBACK = "127.0.0.1"
KNOWN_PORTS = {11434: "Ollama", 1234: "LM Studio", 8080: "llama.cpp (llama-server)", 8000: "vLLM"}
PROBE_SECONDS = 0.5  # a server on loopback answers its model list in milliseconds
# /v1/models does not say what a model does: these parts of its id mark an embedding model.
EMBEDDING_PARTS = ("embed", "bge", "minilm", "nomic")
EMBEDDING_TOKENS = {"e5", "gte"}  # whole tokens only (« qwen2.5 » is no e5)


class LocalServer(BaseModel):
    name: str  # the program its port is known for
    base_url: str  # what to set as OBSIRAG_LLM_BASE_URL
    chat_models: list[str]
    embedding_models: list[str]


def find_local_servers(
    ports: Iterable[int], skip: Iterable[int] = (), client: httpx.Client | None = None
) -> list[LocalServer]:
    """The servers answering a model list on ``ports`` of 127.0.0.1, but ``skip`` (ObsiRAG's own port)."""
    skipped = set(skip)
    wanted = [port for port in dict.fromkeys(ports) if port not in skipped]
    probe = client or httpx.Client(timeout=PROBE_SECONDS, trust_env=False)  # no proxy between us and loopback
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            found = list(pool.map(lambda port: _probe(probe, port), wanted))
    finally:
        if client is None:
            probe.close()
    return [server for server in found if server is not None]


def _probe(client: httpx.Client, port: int) -> LocalServer | None:
    base_url = f"http://{LOOPBACK}:{port}/v1"
    try:
        response = client.get(f"{base_url}/models")
        response.raise_for_status()
        ids = [str(model["id"]) for model in response.json()["data"]]
    except (httpx.HTTPError, ValueError, KeyError, TypeError):  # nothing there, or not an OpenAI-compatible API
        return None
    embedding = [model for model in ids if is_embedding_model(model)]
    return LocalServer(
        name=KNOWN_PORTS.get(port, f"port {port}"),
        base_url=base_url,
        chat_models=[model for model in ids if model not in embedding],
        embedding_models=embedding,
    )


def is_embedding_model(model: str) -> bool:
    name = model.lower()
    return any(part in name for part in EMBEDDING_PARTS) or bool(EMBEDDING_TOKENS & set(re.split(r"[-/:_.]", name)))
