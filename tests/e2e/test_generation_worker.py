"""The mlx worker as `obsirag up` runs it: killed mid-generation, its caller is told, and it comes back."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from services.config import Settings
from services.llm.models import ChatMessage, GenerationRequest
from services.system import SystemClient
from services.system.generation_client import GenerationClient
from tests.support.system import System, wait_until

pytestmark = pytest.mark.e2e

STORY = [ChatMessage(role="system", content="Be brief."), ChatMessage(role="user", content="Write a long story.")]
QUESTION = [
    ChatMessage(role="system", content="Answer in one sentence."),
    ChatMessage(role="user", content="What is the capital of France?"),
]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A one-note vault: the test is about generation, and indexing the sample vault would compete with it."""
    (tmp_path / "vault").mkdir()
    (tmp_path / "vault" / "Note.md").write_text("# Note\n\nUne ligne.", encoding="utf-8")
    return tmp_path / "vault"


def test_killed_worker_ends_the_stream_with_an_error_then_restarts_and_serves(
    launch: Callable[[], System], settings: Settings
) -> None:
    system = launch()  # the bundled model converted once for the whole run (tests.support.system)
    system.wait_alive(("supervisor", "mlx_worker"))
    client = GenerationClient(settings.model_copy(update={"redis_url": system.settings.effective_redis_url}))
    victim = system.process_state("mlx_worker").pid

    events = client.events(client.submit(GenerationRequest(messages=STORY, max_tokens=300)))
    assert next(e for e in events if e.kind != "progress").kind == "token"  # loaded and generating
    os.kill(victim, signal.SIGKILL)
    killed_at = time.monotonic()
    last = list(events)[-1]
    assert last.kind == "error" and "s'est arrêté pendant la réponse" in last.error
    assert time.monotonic() - killed_at < 10  # told promptly, not after the request's timeout

    wait_until(lambda: (s := system.process_state("mlx_worker")) and s.pid != victim, "the supervisor's restart")
    result = client.text(GenerationRequest(messages=QUESTION, max_tokens=12))
    assert "Paris" in result.text and result.backend == "mlx"

    # what `obsirag status` prints, refreshed by the worker's next heartbeat (every heartbeat_seconds)
    wait_until(lambda: (g := SystemClient(client.settings).status().generation) and g.loaded, "its heartbeat")
    status = SystemClient(client.settings).status()
    assert status.generation.pid != victim and status.generation.backend == "mlx"
    assert any(p.name == "mlx_worker" and p.alive for p in status.processes)
    system.stop()
