"""`obsirag model use` switches the running generation worker without a restart (issue #33): from a model
server to another, then to a model pulled from the hub (the bundled model's files, served by the local hub);
a failed pull leaves the model in use answering. The worker is the real loop (Huey consumer, heartbeats,
Redis streams) in a thread; the servers are scripted OpenAI-compatible ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from services.choices import ChosenModels, write_choices
from services.llm.models import ChatMessage, GenerationRequest
from services.system.generation_client import GenerationClient
from tests.support.generation import running_worker, worker_settings
from tests.support.hub import Hub
from tests.support.hub_fixtures import CHAT
from tests.support.scripted_openai import ScriptedOpenAI, serving
from workers.cli import main


def ask(client: GenerationClient) -> tuple[str, str | None, str | None]:
    result = client.text(GenerationRequest(messages=[ChatMessage(role="user", content="Bonjour ?")], max_tokens=4))
    return result.text, result.backend, result.model


def test_use_switches_the_running_worker_and_the_next_answer_comes_from_the_chosen_model(
    fresh_hub: Hub, redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OBSIRAG_REDIS_URL", redis_url)  # the CLI reaches the worker's Redis
    monkeypatch.setenv("OBSIRAG_DATA_ROOT", str(tmp_path))  # its model cache: tmp_path / "models"
    where = ["--vault", str(tmp_path), "--data", str(tmp_path / "data")]
    with serving(ScriptedOpenAI()) as first, serving(ScriptedOpenAI()) as second:
        first.models, second.models = ["model-a"], ["model-b"]
        first.script(*["de A"] * 4)
        second.script(*["de B"] * 4)
        chosen = ChosenModels(llm_backend="openai", llm_base_url=first.base_url, llm_model="model-a")
        write_choices(tmp_path / "data", chosen)  # chosen before the start, as a user's earlier `use`
        settings = worker_settings(redis_url, tmp_path, llm_can_write="yes", llm_warm_up=False)
        with running_worker(settings):
            client = GenerationClient(settings)
            assert ask(client) == ("de A", "openai", "model-a")

            switched = CliRunner().invoke(main, ["model", "use", "model-b", "--url", second.base_url, *where])
            assert switched.exit_code == 0, switched.output
            assert "Le worker de génération s'en sert maintenant." in switched.stdout
            assert ask(client) == ("de B", "openai", "model-b") and len(first.requests) == 1

            failed = CliRunner().invoke(main, ["model", "pull", "nobody/nothing", *where])
            assert failed.exit_code == 1 and "le modèle en usage reste" in failed.stderr
            assert ask(client) == ("de B", "openai", "model-b")  # the failed pull changed nothing

            pulled = CliRunner().invoke(main, ["model", "pull", CHAT, *where])
            assert pulled.exit_code == 0, pulled.output
            switched = CliRunner().invoke(main, ["model", "use", CHAT, *where])
            assert "Le worker de génération s'en sert maintenant." in switched.stdout, switched.output
            text, backend, model = ask(client)
            assert (backend, model) == ("mlx", CHAT) and text.strip()  # the pulled files, loaded by MLX
            assert client.state().model == CHAT and len(second.requests) == 2
