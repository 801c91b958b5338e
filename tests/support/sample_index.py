"""The sample vault, copied and indexed in-process with multilingual-e5-small: the chat and research tests' index.

``sample_index`` seeds the run's embedding caches (``seed_sample_caches``), so only what a test adds is embedded.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from services.catalog import Catalog
from services.config import MULTILINGUAL_EMBEDDING_MODEL, Settings
from services.indexing.pipeline import IndexPipeline
from services.indexing.reconcile import changed_paths
from services.retrieval.embedding import Embedder
from services.retrieval.search import SearchEngine
from services.retrieval.sentence_scores import sentence_scores
from services.retrieval.store import EdgeStore
from tests.conftest import copy_sample_vault
from tests.support.system import seed_sample_caches


@dataclass
class SampleIndex:
    settings: Settings
    pipeline: IndexPipeline
    search: SearchEngine
    embedder: Embedder

    @property
    def catalog(self) -> Catalog:
        return self.pipeline.catalog

    def score(self, question: str, sentences: list[str]) -> list[float]:
        """How close each sentence is to the question: the indexer's task, in this process (quoted answers)."""
        return sentence_scores(self.embedder, question, sentences)


@contextmanager
def sample_index(
    root: Path, embedder: Embedder, caches: Path, extra: dict[str, str] | None = None, **settings: object
) -> Iterator[SampleIndex]:
    """The sample vault (with ``extra`` notes: path → text) under ``root``, indexed; ``settings`` override."""
    copy_sample_vault(root / "vault")
    for path, text in (extra or {}).items():
        (root / "vault" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "vault" / path).write_text(text, encoding="utf-8")
    configured = Settings(
        _env_file=None,
        vault=root / "vault",
        data_dir=root / "data",
        embedding_model=MULTILINGUAL_EMBEDDING_MODEL,
        **settings,  # type: ignore[arg-type]
    )
    seed_sample_caches(configured, caches)  # the sample vault embedded once per run
    pipeline = IndexPipeline(configured, EdgeStore(configured.store_path), Catalog(configured.catalog_path), embedder)
    pipeline.sync_paths(changed_paths(configured, pipeline.catalog))
    try:
        yield SampleIndex(configured, pipeline, SearchEngine(pipeline.store, embedder), embedder)
    finally:
        pipeline.store.close()
