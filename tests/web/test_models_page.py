"""The « Modèles » page (issue #33): what is in use, pulled, worth pulling here and served on this machine;
choosing a model and pulling one from the browser (CSRF required), the pull's progress read live. The pull
runs for real, in a child process of the web app, from the local hub of ``tests/support/hub_fixtures.py``."""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar.testing import TestClient

from services.choices import read_choices
from services.config import Settings
from tests.support.hub import Hub
from tests.support.hub_fixtures import RERANKER
from tests.support.scripted_openai import ScriptedOpenAI, serving
from tests.support.system import wait_until
from web.app import CSRF_COOKIE, create_app


@pytest.fixture
def site(tmp_path: Path, fresh_hub: Hub) -> Iterator[tuple[Settings, TestClient, ScriptedOpenAI]]:
    (tmp_path / "vault").mkdir()
    with serving(ScriptedOpenAI()) as server:
        server.models = ["qwen2.5:7b"]
        settings = Settings(
            vault=tmp_path / "vault",
            data_root=tmp_path,
            data_dir=tmp_path / "data",
            redis_url=f"unix://{tmp_path}/no-redis.sock",
            llm_local_ports=[server.server_address[1]],
        )
        with TestClient(create_app(settings)) as client:
            yield settings, client, server


def post(client: TestClient, url: str, form: dict[str, str]) -> str:
    """The fragment a form's htmx request gets, as the reader sees it (entities unescaped)."""
    return html.unescape(client.post(url, data=form, headers=csrf(client)).text)


def csrf(client: TestClient) -> dict[str, str]:
    client.get("/models")
    return {"x-csrftoken": client.cookies[CSRF_COOKIE]}


def test_the_page_shows_each_role_the_candidates_and_the_servers_found(
    site: tuple[Settings, TestClient, ScriptedOpenAI],
) -> None:
    _, client, server = site
    page = client.get("/models").text
    assert "Génération : <strong>bundled:smollm2-135m</strong>" in page and "Reranking : aucun" in page
    assert "intfloat/multilingual-e5-base" in page and "Chiffres publiés par leurs auteurs, non mesurés ici." in page
    assert "mlx-community/Qwen2.5-7B-Instruct-4bit" not in page  # MLX weights: proposed on Apple silicon only
    assert server.base_url in page and "qwen2.5:7b" in page and "Rédiger avec" in page
    assert 'href="/models" class="active"' in page


def test_choosing_from_the_page_writes_the_choice_and_needs_the_csrf_token(
    site: tuple[Settings, TestClient, ScriptedOpenAI],
) -> None:
    settings, client, server = site
    form = {"model": "qwen2.5:7b", "url": server.base_url}
    assert client.post("/models/use", data=form).status_code == 403
    said = post(client, "/models/use", form)
    assert "La génération passe à qwen2.5:7b dès la fin de la réponse en cours." in said
    chosen = read_choices(settings.data_dir)
    assert (chosen.llm_backend, chosen.llm_base_url, chosen.llm_model) == ("openai", server.base_url, "qwen2.5:7b")
    assert "Génération : <strong>qwen2.5:7b</strong> (openai" in client.get("/models").text
    refused = post(client, "/models/use", {"model": "org/absent"})
    assert "org/absent n'est ni téléchargé ni servi sur cette machine" in refused


def test_a_pull_started_from_the_page_shows_its_progress_and_lands_among_the_installed(
    site: tuple[Settings, TestClient, ScriptedOpenAI],
) -> None:
    settings, client, _ = site
    said = post(client, "/models/pull", {"model": "pas un identifiant"})
    assert "n'est pas un identifiant du hub" in said
    said = post(client, "/models/pull", {"model": RERANKER})
    assert f"Téléchargement de {RERANKER} lancé" in said
    pulled = lambda: f"<strong>{RERANKER}</strong> — reranking" in client.get("/models/pulls").text  # noqa: E731
    wait_until(pulled, "the pull started from the page to finish", timeout=60)
    chosen = post(client, "/models/use", {"model": RERANKER})
    assert f"Reranker : {RERANKER}, dès la prochaine recherche." in chosen
    assert read_choices(settings.data_dir).rerank_model == RERANKER
