"""`obsirag model bench` (issue #33): the bundled model and the e5 default timed on this machine, and a
generation worker started afterwards sizes its context budget from the measured rates (no guess, no warm-up)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from services.config import BUNDLED_LLM_MODEL, MULTILINGUAL_EMBEDDING_MODEL
from services.llm.serving import WARM_UP_DISCOUNT, Limits
from services.system.generation_client import GenerationClient
from tests.support.generation import running_worker, shared_data_root, worker_settings
from tests.support.system import wait_until
from workers.cli import main
from workers.cli_model import rates_line


def test_bench_times_the_models_in_use_and_the_next_worker_starts_from_its_rates(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OBSIRAG_DATA_ROOT", str(shared_data_root()))  # where the bundled model is converted
    where = ["--vault", str(tmp_path), "--data", str(tmp_path / "data")]
    result = CliRunner().invoke(main, ["model", "bench", "--json", *where])
    assert result.exit_code == 0, result.output
    generation, embedding = json.loads(result.stdout)
    assert (generation["model"], generation["backend"]) == (BUNDLED_LLM_MODEL, "mlx")
    assert generation["prompt_tokens_per_s"] > 0 and generation["decode_tokens_per_s"] > 0
    assert embedding["model"] == MULTILINGUAL_EMBEDDING_MODEL and embedding["chunks_per_s"] > 0
    assert embedding["query_ms"] > 0

    settings = worker_settings(redis_url, tmp_path, llm_warm_up=False)
    with running_worker(settings):
        state = wait_until(GenerationClient(settings).state, "the worker's first heartbeat")
    prompt = round(generation["prompt_tokens_per_s"] * WARM_UP_DISCOUNT, 2)
    assert not state.loaded and state.prompt_rate_measured and state.prompt_tokens_per_s == prompt
    assert state.prompt_budget == Limits().prompt_budget(prompt, generation["decode_tokens_per_s"])


def test_each_rate_is_said_in_one_line() -> None:
    from services.system.model_bench import Rates

    line = rates_line(Rates(role="embedding", model="e5", chunks_per_s=12.5, query_ms=14.0))
    assert line == "embedding e5 : 12,5 extraits/s, une requête en 14,0 ms"
