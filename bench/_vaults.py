"""BEIR corpora as vaults for the grounding bench: half the corpus indexed, built once and kept on disk.

A corpus is cut in two halves by a hash of each document id. Half ``a``'s vault holds only its documents:
a query whose relevant documents are all in it is answerable there, and a query whose relevant documents
are all in half ``b`` is near-domain unanswerable there (the vault talks about the topic, not the answer).
Both halves are built, so every query is asked once each way. The same chunks are embedded for both
halves, so passage embeddings are computed once per model (``EmbeddingCache``); each built half (vault,
store, catalog) stays under ``--cache`` and is reopened, not rebuilt, while the code that builds it is unchanged.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from _beir import Benchmark, note_path, note_text
from retrieval_quality import INDEX_BATCH, EmbeddingCache

from services.catalog import Catalog
from services.config import Settings
from services.indexing import chunking
from services.indexing import pipeline as indexing
from services.indexing.pipeline import IndexPipeline
from services.retrieval import lexical
from services.retrieval.embedding import Embedder
from services.retrieval.store import EdgeStore

HALVES = ("a", "b")
log = logging.getLogger("bench")


def half_of(doc_id: str) -> str:
    return HALVES[hashlib.sha1(f"vault:{doc_id}".encode()).digest()[0] % 2]


def is_held_out(key: str) -> bool:
    """One question in three is kept out of tuning, by a hash of its first relevant document (paraphrases
    of one question stay on the same side)."""
    return hashlib.sha1(f"split:{key}".encode()).digest()[0] % 3 == 0


@dataclass
class HalfIndex:
    bench: str
    half: str
    settings: Settings
    store: EdgeStore
    catalog: Catalog
    doc_of_path: dict[str, str]

    def close(self) -> None:
        self.store.close()
        self.catalog.close()


def _fingerprint(model: str, bench: Benchmark, half: str) -> str:
    """Changes with the model, the documents and the code that turns them into points."""
    digest = hashlib.sha1(f"{model}\0{bench.name}\0{half}\0{len(bench.docs)}".encode())
    for module in (chunking, indexing, lexical):
        digest.update(Path(module.__file__).read_bytes())  # type: ignore[arg-type]
    return digest.hexdigest()[:12]


def open_half(bench: Benchmark, half: str, embedder: Embedder, cache: Path) -> HalfIndex:
    """The half's index, built into ``cache`` the first time (minutes with e5), reopened afterwards."""
    root = cache / f"{bench.name}-{half}-{_fingerprint(embedder.name, bench, half)}"
    vault, done = root / "vault", root / "built"
    settings = Settings(_env_file=None, vault=vault, data_dir=root / "data", embedding_model=embedder.name)
    docs = [doc for doc in bench.docs.values() if half_of(doc.id) == half]
    doc_of_path = {note_path(doc.id): doc.id for doc in docs}
    if not done.exists():
        shutil.rmtree(root, ignore_errors=True)
        vault.mkdir(parents=True)
        for doc in docs:
            (vault / note_path(doc.id)).write_text(note_text(doc), encoding="utf-8")
        _build(settings, sorted(doc_of_path), embedder, cache)
        done.touch()
    return HalfIndex(
        bench.name, half, settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), doc_of_path
    )


def open_folder(name: str, folder: Path, embedder: Embedder, cache: Path) -> HalfIndex:
    """A whole vault folder (the sample vault) copied and indexed like a half, all its notes gold-able."""
    digest = hashlib.sha1(name.encode() + embedder.name.encode())
    for note in sorted(folder.rglob("*.md")):
        digest.update(note.read_bytes())
    for module in (chunking, indexing, lexical):
        digest.update(Path(module.__file__).read_bytes())  # type: ignore[arg-type]
    root = cache / f"{name}-{digest.hexdigest()[:12]}"
    settings = Settings(_env_file=None, vault=root / "vault", data_dir=root / "data", embedding_model=embedder.name)
    paths = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.md"))
    if not (root / "built").exists():
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(folder, settings.vault)
        _build(settings, paths, embedder, cache)
        (root / "built").touch()
    store, catalog = EdgeStore(settings.store_path), Catalog(settings.catalog_path)
    return HalfIndex(name, "", settings, store, catalog, {p: p for p in paths})


def _build(settings: Settings, paths: list[str], embedder: Embedder, cache: Path) -> None:
    store, catalog = EdgeStore(settings.store_path), Catalog(settings.catalog_path)
    pipeline = IndexPipeline(settings, store, catalog, embedder)
    started = time.perf_counter()
    with EmbeddingCache(cache, embedder.name).around(embedder):
        for start in range(0, len(paths), INDEX_BATCH):
            report = pipeline.sync_paths(paths[start : start + INDEX_BATCH], raise_errors=True)
            if report.failed or report.skipped:
                raise RuntimeError(f"indexing failed: {report.failed or report.skipped}")
            log.info(
                "  %s: indexed %d/%d notes",
                settings.vault.parent.name,
                min(start + INDEX_BATCH, len(paths)),
                len(paths),
            )
    store.optimize()
    log.info("  %d chunks in %.0f s", store.count(), time.perf_counter() - started)
    store.close()
    catalog.close()
