"""The search learns from the user's clicks (issue #32), on real Edge indexes of the sample vault with e5.

A question recorded against a note (``opened``, « c'était ça ») brings that note first for a question close
in meaning; « pas ça » sends it last; forgetting gives the old ranking back; another vault (its own data dir)
never sees the marks; the vault's files are never written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from services.catalog import Catalog
from services.catalog.models import Verdict
from services.config import MULTILINGUAL_EMBEDDING_MODEL, Settings
from services.indexing.pipeline import IndexPipeline
from services.indexing.reconcile import changed_paths
from services.retrieval.embedding import Embedder
from services.retrieval.learned import LearnedMarks
from services.retrieval.search import SearchEngine, SearchRequest
from services.retrieval.store import EdgeStore
from tests.conftest import copy_sample_vault
from tests.support.system import seed_sample_caches

RECORDED = "Comment faire pousser des tomates sur mon balcon en ville ?"
CLOSE = "Comment cultiver des tomates sur un balcon en ville ?"
UNRELATED = "Quelles sont les bonnes pratiques pour écrire du Python ?"


@dataclass
class Vault:
    folder: Path
    catalog: Catalog
    search: SearchEngine

    def paths(self, query: str) -> list[str]:
        return [r.path for r in self.search.search(SearchRequest(query=query, k=8)).results]


def _open_vault(root: Path, embedder: Embedder, sample_caches: Path) -> Vault:
    copy_sample_vault(root / "vault")
    settings = Settings(
        _env_file=None, vault=root / "vault", data_dir=root / "data", embedding_model=MULTILINGUAL_EMBEDDING_MODEL
    )
    seed_sample_caches(settings, sample_caches)
    pipeline = IndexPipeline(settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), embedder)
    pipeline.sync_paths(changed_paths(settings, pipeline.catalog))
    marks = LearnedMarks(pipeline.catalog.marks)
    return Vault(root / "vault", pipeline.catalog, SearchEngine(pipeline.store, embedder, marks=marks))


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


@pytest.fixture(scope="module")
def vaults(
    tmp_path_factory: pytest.TempPathFactory, e5_embedder: Embedder, sample_caches: Path
) -> Iterator[tuple[Vault, Vault]]:
    first = _open_vault(tmp_path_factory.mktemp("first"), e5_embedder, sample_caches)
    second = _open_vault(tmp_path_factory.mktemp("second"), e5_embedder, sample_caches)
    yield first, second
    for vault in (first, second):
        vault.search.store.close()
        vault.catalog.close()


@pytest.fixture
def vault(vaults: tuple[Vault, Vault]) -> Iterator[Vault]:
    yield vaults[0]
    vaults[0].catalog.forget_marks()


def test_an_opened_note_comes_first_for_a_close_question_and_forgetting_gives_the_old_ranking_back(
    vault: Vault,
) -> None:
    before = vault.paths(CLOSE)
    target = before[2]  # a note the search did not put first
    mark = vault.catalog.add_mark(RECORDED, target, Verdict.OPENED)

    response = vault.search.search(SearchRequest(query=CLOSE, k=8))
    assert response.results[0].path == target
    assert response.results[0].learned
    assert not any(r.learned for r in response.results[1:])
    assert vault.paths(UNRELATED)[0] != target  # a question about something else is not moved

    assert vault.catalog.forget_mark(mark)
    assert vault.paths(CLOSE) == before


def test_a_note_outside_the_results_is_brought_in(vault: Vault) -> None:
    before = vault.paths(CLOSE)
    outside = "Personnes/Thomas Bernard.md"
    assert outside not in before[:3]
    vault.catalog.add_mark(RECORDED, outside, Verdict.YES)
    assert vault.paths(CLOSE)[0] == outside


def test_pas_ca_sends_the_note_down(vault: Vault) -> None:
    before = vault.paths(CLOSE)
    vault.catalog.add_mark(RECORDED, before[0], Verdict.NO)
    after = vault.paths(CLOSE)
    assert before[0] not in after[:3]
    assert after[0] == before[1]
    vault.catalog.forget_marks()
    assert vault.paths(CLOSE) == before


def test_another_vault_never_sees_the_marks(vaults: tuple[Vault, Vault]) -> None:
    first, second = vaults
    before = second.paths(CLOSE)
    target = before[2]
    first.catalog.add_mark(RECORDED, target, Verdict.OPENED)
    try:
        assert first.paths(CLOSE)[0] == target
        assert second.paths(CLOSE) == before
        assert second.catalog.list_marks() == []
    finally:
        first.catalog.forget_marks()


def test_marks_write_nothing_in_the_vault(vault: Vault) -> None:
    before = _digest(vault.folder)
    vault.catalog.add_mark(RECORDED, vault.paths(CLOSE)[1], Verdict.OPENED)
    vault.paths(CLOSE)
    vault.catalog.forget_marks()
    assert _digest(vault.folder) == before


def test_a_mark_is_listed_and_its_vector_kept_for_its_model(vault: Vault) -> None:
    vault.catalog.add_mark(RECORDED, "Projets/Potager partagé.md", Verdict.YES)
    vault.paths(CLOSE)  # the search embeds the recorded question once
    [(mark, vector)] = vault.catalog.mark_vectors(vault.search.embedder.name)
    assert (mark.question, mark.path, mark.verdict) == (RECORDED, "Projets/Potager partagé.md", Verdict.YES)
    assert vector is not None and vector.shape == (vault.search.embedder.dim,)
    assert vault.catalog.mark_vectors("another-model")[0][1] is None  # another model re-embeds it
