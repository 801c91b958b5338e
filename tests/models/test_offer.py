"""The right default per machine (issue #33): on Apple silicon with the memory for it, the first `obsirag up`
proposes the model that writes, once; with ``OBSIRAG_AUTO_PULL=yes`` it is pulled in the background (the local
hub stands in; the platform is faked, the pull and the switch are real) and used once verified. On Linux, and
when a variable chose the model, nothing is proposed."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.choices import read_choices
from services.config import Settings
from services.system import model_choice
from services.system.model_choice import decline_offer, first_start_offer
from tests.support.hub import Hub
from tests.support.hub_fixtures import SEED
from tests.support.system import wait_until
from workers.cli_model_use import offer_better_model


@pytest.fixture
def mac(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_choice, "is_apple_silicon", lambda: True)
    monkeypatch.setattr(model_choice, "memory_gb", lambda: 32.0)


def settings_in(tmp_path: Path, **fields: object) -> Settings:
    (tmp_path / "vault").mkdir(exist_ok=True)
    return Settings(_env_file=None, vault=tmp_path / "vault", data_root=tmp_path, data_dir=tmp_path / "data", **fields)


def test_a_mac_is_offered_the_seed_model_once_and_linux_or_a_chosen_model_never(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model_choice, "is_apple_silicon", lambda: False)
    assert first_start_offer(settings_in(tmp_path)) is None  # Linux: the bundled model stays
    monkeypatch.setattr(model_choice, "is_apple_silicon", lambda: True)
    monkeypatch.setattr(model_choice, "memory_gb", lambda: 8.0)
    offer = first_start_offer(settings_in(tmp_path))
    assert offer is not None and offer.model == "mlx-community/Llama-3.2-3B-Instruct-4bit"  # what fits in 8 GB
    monkeypatch.setattr(model_choice, "memory_gb", lambda: 32.0)
    assert first_start_offer(settings_in(tmp_path)).model == SEED  # type: ignore[union-attr]
    assert first_start_offer(settings_in(tmp_path, llm_model="mlx-community/Other")) is None
    assert first_start_offer(settings_in(tmp_path, auto_pull="no")) is None
    decline_offer(settings_in(tmp_path))
    assert first_start_offer(settings_in(tmp_path)) is None


def test_auto_pull_yes_pulls_the_offer_in_the_background_and_uses_it_once_verified(
    mac: None, fresh_hub: Hub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = settings_in(tmp_path, auto_pull="yes")
    offer_better_model(settings)
    assert "Téléchargement lancé" in capsys.readouterr().out
    wait_until(lambda: read_choices(settings.data_dir).llm_model == SEED, "the offered model to be pulled and chosen")
    assert read_choices(settings.data_dir).llm_backend == "mlx"
    assert first_start_offer(settings_in(tmp_path)) is None  # pulled: not offered again


def test_without_a_terminal_up_only_says_how(mac: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    offer_better_model(settings_in(tmp_path))  # pytest's stdin is no terminal
    said = capsys.readouterr().out
    assert f"obsirag model pull {SEED} --use (ou OBSIRAG_AUTO_PULL=yes)" in said
    assert not (tmp_path / "models").exists()  # nothing downloaded without a yes
