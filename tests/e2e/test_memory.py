"""Memory in the running system: the learner's first tick writes the briefing and the reminders' mirror,
and no note of the user's changes."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.config import Settings
from services.memory.reminders import parse_reminder, save_reminder
from tests.conftest import tree_hashes
from tests.support.system import System, start_system, wait_until
from workers.process import stop_process

pytestmark = pytest.mark.e2e


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A small vault: the briefing's lines are the test's own, and no indexing of the sample vault competes."""
    root = tmp_path / "vault"
    (root / "Jardin").mkdir(parents=True)
    (root / "Jardin" / "Semis.md").write_text("# Semis\n\nLes tomates se sèment en mars.", encoding="utf-8")
    return root


@pytest.fixture
def memory_system(settings: Settings) -> Callable[[], System]:
    # No model (the learner off): the briefing's deterministic parts and the mirrors, without a model call.
    on = settings.model_copy(update={"memory_enabled": True, "learn_enabled": False})
    started: list[System] = []

    def launch() -> System:
        started.append(start_system(on))
        return started[-1]

    yield launch  # type: ignore[misc]
    for system in started:
        stop_process(system.process, 60, signal.SIGINT)


def test_the_learner_writes_the_briefing_and_the_reminders_mirror_and_no_note(
    memory_system: Callable[[], System], settings: Settings, vault: Path
) -> None:
    old = (datetime.now() - timedelta(days=30)).timestamp()
    (vault / "Maison").mkdir(exist_ok=True)
    (vault / "Maison" / "Travaux.md").write_text("# Travaux\n\n- [ ] Appeler le plombier\n", encoding="utf-8")
    os.utime(vault / "Maison" / "Travaux.md", (old, old))
    asked = datetime.now().astimezone() - timedelta(days=22)
    with Catalog(settings.catalog_path) as catalog:
        reminder = save_reminder(
            catalog, parse_reminder("rappelle-moi dans 3 semaines de relancer Sophie", asked), asked
        )  # type: ignore[arg-type]
    before = tree_hashes(vault)
    system = memory_system()
    briefings = vault / "obsirag" / "briefings"
    written = wait_until(lambda: list(briefings.glob("*.md")), "the briefing")
    text = written[0].read_text(encoding="utf-8")
    assert "relancer Sophie — " in text and f"(rappel #{reminder.id})" in text
    assert "- Appeler le plombier — [[Maison/Travaux|Travaux]]" in text
    mirror = vault / "obsirag" / "assistant" / "Rappels.md"
    wait_until(lambda: mirror.exists(), "the reminders' mirror")
    assert not (vault / "obsirag" / "assistant" / "Profil.md").exists()  # no fact yet: no profile
    assert {k: v for k, v in tree_hashes(vault).items() if not k.startswith("obsirag/")} == before
    system.stop()
