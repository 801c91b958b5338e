"""What the configured model can do: write the chat's answers, or not (they are then quoted from the notes)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from services.config import BUNDLED_LLM_MODEL, Settings
from services.llm.backend import Backend
from services.llm.capability import (
    PROBES,
    check_capability,
    describe,
    model_writes,
    remembered_or_checked,
    stated_capability,
    writer_wait,
)
from services.llm.models import Capability, ChatMessage, WorkerState

GOOD = {
    "answer": "Le potager est arrosé chaque mardi et chaque vendredi [1].",
    "choose": "L'atelier de taille est animé par Sophie [2].",
    "refuse": "Les extraits ne précisent pas le prix de l'adhésion.",
}


class Scripted(Backend):
    """Answers each probe from ``replies`` (by its question), counting the calls."""

    name = "openai"

    def __init__(self, replies: dict[str, str]) -> None:
        super().__init__("scripted")
        self.replies, self.calls = replies, 0

    @property
    def loaded(self) -> bool:
        return True

    def load(self) -> None:
        pass

    def _generate(self, messages: list[ChatMessage], *args: object, **kwargs: object) -> Iterator[str]:
        self.calls += 1
        probe = next(p for p in PROBES if p.question in messages[-1].content)
        yield self.replies[probe.name]


class FakeRedis:
    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    def get(self, key: str) -> bytes | None:
        return self.data.get(key)

    def set(self, key: str, value: str, ex: int | None = None) -> None:
        self.data[key] = value.encode()


def test_the_setting_states_it_and_the_bundled_model_does_not_write_under_auto() -> None:
    assert stated_capability("auto", "mlx", BUNDLED_LLM_MODEL).model_dump(include={"can_write", "reason"}) == {
        "can_write": False,
        "reason": "bundled",
    }
    assert stated_capability("yes", "mlx", BUNDLED_LLM_MODEL).can_write is True
    assert stated_capability("no", "openai", "qwen").can_write is False
    assert stated_capability("auto", "openai", BUNDLED_LLM_MODEL).can_write is None  # a server: checked
    assert model_writes(Settings(), None) is False  # the defaults: quoted answers
    assert model_writes(Settings(llm_model="mlx-community/Qwen2.5-7B-Instruct-4bit"), None) is True
    assert model_writes(Settings(), True) is True  # what the worker published wins


def test_work_the_model_must_write_waits_for_one_that_can_and_says_how_to_get_it() -> None:
    bundled = writer_wait(Settings(), None)  # no worker: the settings say it
    assert bundled is not None and bundled.reason == "bundled"
    text = bundled.text()
    assert text.startswith("en attente d'un modèle capable de rédiger : le modèle intégré (SmolLM2-135M)")
    assert "OBSIRAG_LLM_MODEL" in text and "OBSIRAG_LLM_CAN_WRITE=yes" in text
    assert writer_wait(Settings(llm_can_write="yes"), None) is None
    failed = Capability(can_write=False, reason="check", passed=1, probes=3)
    state = WorkerState(backend="openai", model="petit-modele", capability=failed)
    wait = writer_wait(Settings(llm_backend="openai", llm_model="petit-modele"), state)
    assert wait is not None and "petit-modele a échoué à la vérification du démarrage (1/3" in wait.text()
    assert wait.text("en").startswith("waiting for a model that can write: petit-modele failed")
    passed = state.model_copy(update={"capability": Capability(can_write=True, reason="check", passed=3, probes=3)})
    assert writer_wait(Settings(), passed) is None  # what the worker published wins over the bundled default


def test_a_model_that_answers_cites_and_refuses_in_french_writes() -> None:
    found = check_capability(Scripted(GOOD))
    assert (found.can_write, found.passed, found.probes, found.reason) == (True, 3, 3, "check")


@pytest.mark.parametrize(
    ("probe", "reply"),
    [
        ("answer", "The garden is watered on Tuesdays and Fridays [1]."),  # not French
        ("answer", "Le potager est arrosé le mardi et le vendredi."),  # no citation
        ("choose", "L'atelier est animé par Lucie [1]."),  # the wrong excerpt
        ("refuse", "L'adhésion coûte 20 euros [1]."),  # invented
        ("refuse", "Tu es un assistant. " * 6),  # a loop
    ],
)
def test_one_failed_probe_is_enough_to_quote(probe: str, reply: str) -> None:
    found = check_capability(Scripted({**GOOD, probe: reply}))
    assert found.can_write is False and found.passed == 2 and found.detail.startswith(f"{probe}: ")


def test_the_verdict_is_kept_per_model_so_a_restart_asks_nothing() -> None:
    client, backend = FakeRedis(), Scripted(GOOD)
    assert remembered_or_checked(backend, client).can_write is True  # type: ignore[arg-type]
    assert remembered_or_checked(backend, client).can_write is True and backend.calls == 3  # type: ignore[arg-type]


def test_a_check_that_cannot_run_leaves_it_unknown() -> None:
    class Down(Scripted):
        def _generate(self, messages: Sequence[ChatMessage], *args: object, **kwargs: object) -> Iterator[str]:
            raise ConnectionError("server down")

    found = remembered_or_checked(Down(GOOD), FakeRedis())  # type: ignore[arg-type]
    assert found.can_write is None and found.reason == "unchecked" and "server down" in found.detail


def test_the_dashboard_says_why() -> None:
    assert describe(False, "bundled").startswith("non : le modèle intégré")
    assert describe(True, "check", 3, 3) == "oui (vérifié au démarrage : 3/3 épreuves réussies)"
    assert describe(False, "setting", lang="en") == "no (OBSIRAG_LLM_CAN_WRITE)"
