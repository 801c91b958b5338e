"""Choosing a model (issue #33): `obsirag model use` writes the choice every process reads under the
environment, `remove` takes a model away; a variable set by hand wins and the command says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from services.choices import read_choices
from services.config import Settings, rechosen
from services.models.pull import pull
from tests.support.hub import Hub
from tests.support.hub_fixtures import EMBEDDER, RERANKER
from tests.support.scripted_openai import ScriptedOpenAI, serving
from workers.cli import main


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    (tmp_path / "vault").mkdir()
    monkeypatch.setenv("OBSIRAG_DATA_ROOT", str(tmp_path))  # its model cache: tmp_path / "models"
    monkeypatch.setenv("OBSIRAG_LLM_LOCAL_PORTS", "9")  # no model server probed but the discard port
    return ["--vault", str(tmp_path / "vault"), "--data", str(tmp_path / "data")]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_use_chooses_a_pulled_reranker_and_embedder_and_none_turns_the_reranker_off(
    fresh_hub: Hub, place: list[str], tmp_path: Path
) -> None:
    pull(RERANKER, tmp_path / "models")
    pull(EMBEDDER, tmp_path / "models")
    code, said, _ = run("model", "use", RERANKER, *place)
    assert code == 0 and f"Reranker : {RERANKER}, dès la prochaine recherche" in said
    code, said, _ = run("model", "use", EMBEDDER, *place)
    assert code == 0 and "Au prochain `obsirag up`, l'index est reconstruit" in said
    settings = Settings(vault=tmp_path / "vault", data_dir=tmp_path / "data")
    assert (settings.rerank_model, settings.embedding_model) == (RERANKER, EMBEDDER)
    listed = json.loads(run("model", "list", "--json", *place)[1])
    assert listed["reranking"] == {"model": RERANKER, "notes": 30}
    assert {(m["model"], m["role"]) for m in listed["installed"]} == {(RERANKER, "reranking"), (EMBEDDER, "embedding")}
    assert RERANKER not in {c["model"] for c in listed["candidates"]}  # a candidate is offered until pulled
    code, said, _ = run("model", "use", "none", *place)
    assert code == 0 and "Plus de reranker" in said
    assert rechosen(settings).rerank_model == "" and rechosen(settings).embedding_model == EMBEDDER


def test_a_variable_set_by_hand_wins_and_use_says_so(
    fresh_hub: Hub, place: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pull(RERANKER, tmp_path / "models")
    monkeypatch.setenv("OBSIRAG_RERANK_MODEL", "")
    code, _, err = run("model", "use", RERANKER, *place)
    assert code == 1 and "OBSIRAG_RERANK_MODEL est fixé (variable d'environnement, .env ou option)" in err
    assert read_choices(tmp_path / "data").rerank_model is None


def test_an_unknown_model_is_refused_with_what_to_do(place: list[str]) -> None:
    code, _, err = run("model", "use", "org/absent", *place)
    assert code == 1 and "org/absent n'est ni téléchargé ni servi sur cette machine" in err
    assert "`obsirag model pull org/absent` d'abord" in err


def test_a_model_of_a_server_found_on_this_machine_is_chosen_by_its_name(
    place: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serving(ScriptedOpenAI()) as server:
        server.models = ["qwen2.5:7b", "nomic-embed-text"]
        monkeypatch.setenv("OBSIRAG_LLM_LOCAL_PORTS", str(server.server_address[1]))
        code, said, _ = run("model", "use", "qwen2.5:7b", *place)
    assert code == 0 and "Génération : qwen2.5:7b." in said and "prochain `obsirag up`" in said
    chosen = read_choices(tmp_path / "data")
    assert (chosen.llm_backend, chosen.llm_base_url, chosen.llm_model) == ("openai", server.base_url, "qwen2.5:7b")


def test_remove_refuses_the_model_in_use_and_turns_the_reranker_off_first(
    fresh_hub: Hub, place: list[str], tmp_path: Path
) -> None:
    pull(RERANKER, tmp_path / "models")
    pull(EMBEDDER, tmp_path / "models")
    run("model", "use", RERANKER, *place)
    run("model", "use", EMBEDDER, *place)
    code, _, err = run("model", "remove", EMBEDDER, *place)
    assert code == 1 and f"{EMBEDDER} est en usage : choisis-en un autre d'abord" in err
    code, said, _ = run("model", "remove", RERANKER, *place)
    assert code == 0 and "Reranker retiré" in said and f"Supprimé : {RERANKER} (" in said
    assert read_choices(tmp_path / "data").rerank_model == ""
    assert not (tmp_path / "models" / "hub" / RERANKER.replace("/", "--")).exists()
    code, _, err = run("model", "remove", RERANKER, *place)
    assert code == 1 and f"{RERANKER} n'est pas téléchargé" in err
