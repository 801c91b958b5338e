"""Indexing throughput: the real pipeline against a bare ``embedder.encode`` of the same chunks.

The pipeline (``IndexPipeline.sync_paths`` in batches of ``index_batch_notes`` notes, into a fresh Edge
store and catalog) and a raw encode of exactly the texts it embeds (``embedding_text`` of every chunk and
each note's title, each distinct text once: the embedding cache spares the pipeline the repeats, so the raw
side gets none either; one ``encode`` call, same batch size) run in the same process, on the same warm model
and torch threads, alternating which goes first. The figure is pipeline chunks/s ÷ raw chunks/s (target ≥
0.85), in wall time and in CPU time (steadier on a shared machine), with where the pipeline's non-embedding
time goes.

    .venv/bin/python bench/index_throughput.py                  # 240 notes, 2 repeats (~4 min on 2 cores)
    .venv/bin/python bench/index_throughput.py --notes 400 --repeats 3
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import (
    Span,
    Stopwatch,
    hermetic_environment,
    machine,
    measured,
    median,
    print_table,
    variant_vault,
    write_results,
)

TARGET = 0.85
CATALOG_METHODS = (
    "get_note",
    "upsert_note",
    "upsert_notes",
    "replace_links",
    "resolve_links",
    "add_run_stats",
    "delete_note",
    "mark_status",
)
STEPS = ("parse", "chunk", "sparse", "payload", "store", "catalog", "other")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=240, help="notes in the generated vault (default 240)")
    parser.add_argument("--repeats", type=int, default=2, help="pipeline/raw pairs, alternating order (default 2)")
    parser.add_argument("--batch-notes", type=int, help="notes per sync_paths call (default: index_batch_notes)")
    parser.add_argument("--batch-size", type=int, help="chunks per encode batch (default: embedding_batch_size)")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch_threads)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated vault")
    parser.add_argument("--output", type=Path, help="JSON file (default: bench/results/index_throughput-*.json)")
    return parser.parse_args(argv)


@dataclass
class PipelineRun:
    span: Span
    chunks: int
    notes: int
    steps: dict[str, Span]
    calls: dict[str, int]
    encode_batches: list[list[str]] = field(default_factory=list)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    hermetic_environment()
    from services.config import Settings
    from services.retrieval.embedding import load_embedder

    defaults = Settings()
    batch_notes = args.batch_notes or defaults.index_batch_notes
    batch_size = args.batch_size or defaults.embedding_batch_size
    threads = args.threads or defaults.torch_threads
    embedder = load_embedder(defaults.embedding_model, batch_size, threads)
    work = Path(tempfile.mkdtemp(prefix="obsirag-bench-index-"))
    try:
        vault = work / "vault"
        paths = variant_vault(vault, args.notes, args.seed)
        settings = Settings(vault=vault, data_dir=work / "data", index_batch_notes=batch_notes)
        texts = chunk_texts(settings, embedder, paths)
        print(
            f"{len(paths)} notes, {len(texts)} distinct texts (chunks and titles); "
            f"batches of {batch_notes} notes, encode batch {batch_size}, {threads} torch thread(s)"
        )
        warm_up(settings, embedder, work, texts)
        pipeline_runs, raw_runs = [], []
        for repeat in range(args.repeats):
            order = ("pipeline", "raw") if repeat % 2 == 0 else ("raw", "pipeline")
            for side in order:
                check_threads(threads)
                if side == "pipeline":
                    run = run_pipeline(settings, embedder, work / f"data-{repeat}")
                    check_same_texts(run, texts)
                    pipeline_runs.append(run)
                else:
                    raw_runs.append(run_raw(embedder, texts))
            print(f"repeat {repeat + 1}: pipeline {pipeline_runs[-1].span.wall:.1f} s, raw {raw_runs[-1].wall:.1f} s")
        result = summarise(args, embedder, texts, paths, pipeline_runs, raw_runs, batch_notes, batch_size, threads)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(result)
    print(f"results: {write_results('index_throughput', result, args.output)}")
    return 0


# --- the two sides -----------------------------------------------------------------------------------


def chunk_texts(settings: Any, embedder: Any, paths: list[str]) -> list[str]:
    """The texts the pipeline will embed, computed like it does (untimed), in path order: every chunk's
    ``embedding_text`` with the note's context line, and every note's summary (the store's title vector), each
    distinct text once."""
    from services import vault
    from services.indexing.chunking import chunk_note, embedding_texts
    from services.indexing.context import note_summary

    counter = embedder.token_counter
    max_tokens = min(settings.chunk_tokens, embedder.max_tokens)
    texts = []
    for path in paths:
        note = vault.read_note(settings.vault, path, settings.max_file_bytes)
        chunks = chunk_note(note, counter, max_tokens, settings.chunk_overlap_tokens)
        texts += [*embedding_texts(note, chunks, counter, max_tokens), note_summary(note)]
    return list(dict.fromkeys(texts))  # a text met twice is embedded once (the cache has it)


def warm_up(settings: Any, embedder: Any, work: Path, texts: list[str]) -> None:
    """Warm model, analyser caches and store code paths before anything is timed."""
    embedder.encode(texts[: 2 * embedder.batch_size])
    warm = settings.model_copy(update={"data_dir": work / "data-warm-up"})
    run_pipeline(warm, embedder, warm.data_dir, limit=settings.index_batch_notes)


def run_pipeline(settings: Any, embedder: Any, data_dir: Path, limit: int | None = None) -> PipelineRun:
    """Index the whole vault into a fresh store and catalog with ``sync_paths``, batch by batch."""
    from services.catalog import Catalog
    from services.indexing.pipeline import IndexPipeline
    from services.indexing.reconcile import changed_paths
    from services.retrieval.store import EdgeStore

    settings = settings.model_copy(update={"data_dir": data_dir})
    pipeline = IndexPipeline(settings, EdgeStore(settings.store_path), Catalog(settings.catalog_path), embedder)
    pipeline.run_id = pipeline.catalog.start_run("bench")
    paths = changed_paths(settings, pipeline.catalog)[:limit]
    batches: list[list[str]] = []
    watch = instrument(pipeline, batches)
    total, chunks, notes = Span(), 0, 0
    try:
        for start in range(0, len(paths), settings.index_batch_notes):
            with measured() as span:
                report = pipeline.sync_paths(paths[start : start + settings.index_batch_notes])
            total.add(span)
            if report.failed:
                raise RuntimeError(f"pipeline failures: {report.failed}")
            chunks += report.chunks_embedded
            notes += len(report.indexed)
    finally:
        watch.unwrap()
        vars(embedder).pop("encode", None)  # back to the class's method
        pipeline.store.close()
        pipeline.catalog.close()
    steps = dict(watch.spans)
    steps["other"] = Span(
        total.wall - sum(s.wall for s in steps.values()), total.cpu - sum(s.cpu for s in steps.values())
    )
    return PipelineRun(total, chunks, notes, steps, dict(watch.calls), batches)


def instrument(pipeline: Any, batches: list[list[str]]) -> Stopwatch:
    """Time each step of the pipeline by wrapping what it calls; record every encode call's texts."""
    from services import vault
    from services.indexing import pipeline as indexing
    from services.indexing import points
    from services.retrieval import lexical

    embedder = pipeline.embedder
    encode = embedder.encode

    def recording_encode(texts: Sequence[str]) -> Any:
        batches.append(list(texts))
        return encode(texts)

    embedder.encode = recording_encode
    watch = Stopwatch()
    watch.wrap(embedder, "encode", "embed")
    watch.wrap(vault, "read_note", "parse")
    watch.wrap(indexing, "chunk_note", "chunk")
    watch.wrap(lexical, "encode_document", "sparse")
    watch.wrap(points, "chunk_payload", "payload")
    for method in ("upsert", "delete_note"):
        watch.wrap(pipeline.store, method, "store")
    for method in CATALOG_METHODS:
        if hasattr(pipeline.catalog, method):
            watch.wrap(pipeline.catalog, method, "catalog")
    return watch


def run_raw(embedder: Any, texts: list[str]) -> Span:
    """The baseline: every chunk text in one ``encode`` call, as a bare sentence-transformers script would."""
    with measured() as span:
        vectors = embedder.encode(texts)
    assert len(vectors) == len(texts)
    return span


def check_threads(expected: int) -> None:
    import torch

    if torch.get_num_threads() != expected:
        raise RuntimeError(f"torch uses {torch.get_num_threads()} threads, expected {expected}")


def check_same_texts(run: PipelineRun, texts: list[str]) -> None:
    embedded = [text for batch in run.encode_batches for text in batch]
    if Counter(embedded) != Counter(texts):
        raise RuntimeError(f"the pipeline embedded {len(embedded)} texts that differ from the {len(texts)} expected")


# --- figures -----------------------------------------------------------------------------------------


def padded_tokens(embedder: Any, calls: list[list[str]]) -> tuple[int, int]:
    """(real, padded) tokens the model processes for these encode calls.

    sentence-transformers sorts each call's texts by character length and pads each batch to its
    longest text; the model's cost grows with padded tokens.
    """
    counter = embedder.token_counter
    limit = embedder.max_tokens + 2
    real = padded = 0
    for texts in calls:
        lengths = [min(counter.count(t) + 2, limit) for t in sorted(texts, key=len, reverse=True)]
        real += sum(lengths)
        for start in range(0, len(lengths), embedder.batch_size):
            batch = lengths[start : start + embedder.batch_size]
            padded += len(batch) * max(batch)
    return real, padded


def summarise(
    args: argparse.Namespace,
    embedder: Any,
    texts: list[str],
    paths: list[str],
    pipeline_runs: list[PipelineRun],
    raw_runs: list[Span],
    batch_notes: int,
    batch_size: int,
    threads: int,
) -> dict[str, Any]:
    chunks = len(texts)
    pairs = list(zip(pipeline_runs, raw_runs, strict=True))
    real, raw_padded = padded_tokens(embedder, [texts])
    _, pipeline_padded = padded_tokens(embedder, pipeline_runs[0].encode_batches)
    steps = {
        name: {
            "wall_s": round(median([run.steps.get(name, Span()).wall for run in pipeline_runs]), 3),
            "cpu_s": round(median([run.steps.get(name, Span()).cpu for run in pipeline_runs]), 3),
            "calls": pipeline_runs[0].calls.get(name, 0),
        }
        for name in ("embed", *STEPS)
    }
    return {
        "bench": "index_throughput",
        "machine": machine(),
        "config": {
            "notes": len(paths),
            "chunks": chunks,
            "repeats": args.repeats,
            "seed": args.seed,
            "index_batch_notes": batch_notes,
            "embedding_batch_size": batch_size,
            "torch_threads": threads,
            "model": embedder.name,
            "command": " ".join(["bench/index_throughput.py", *sys.argv[1:]]),
        },
        "runs": [
            {
                "pipeline_wall_s": round(run.span.wall, 3),
                "pipeline_cpu_s": round(run.span.cpu, 3),
                "raw_wall_s": round(raw.wall, 3),
                "raw_cpu_s": round(raw.cpu, 3),
                "ratio_wall": round(raw.wall / run.span.wall, 3),
                "ratio_cpu": round(raw.cpu / run.span.cpu, 3),
            }
            for run, raw in pairs
        ],
        "pipeline": _side(chunks, len(paths), [run.span for run in pipeline_runs]),
        "raw_encode": _side(chunks, len(paths), raw_runs),
        "ratio_wall": round(median([raw.wall / run.span.wall for run, raw in pairs]), 3),
        "ratio_cpu": round(median([raw.cpu / run.span.cpu for run, raw in pairs]), 3),
        "target": TARGET,
        "tokens": {
            "real": real,
            "raw_padded": raw_padded,
            "pipeline_padded": pipeline_padded,
            "pipeline_encode_calls": len(pipeline_runs[0].encode_batches),
        },
        "steps": steps,
    }


def _side(chunks: int, notes: int, spans: list[Span]) -> dict[str, float]:
    wall = median([s.wall for s in spans])
    cpu = median([s.cpu for s in spans])
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "notes_per_s": round(notes / wall, 2),
        "chunks_per_s": round(chunks / wall, 2),
        "chunks_per_cpu_s": round(chunks / cpu, 2),
    }


def report(result: dict[str, Any]) -> None:
    config, pipeline, raw = result["config"], result["pipeline"], result["raw_encode"]
    print()
    print(f"{config['notes']} notes, {config['chunks']} chunks, median of {config['repeats']} run(s)")
    print_table(
        ["side", "wall s", "notes/s", "chunks/s", "CPU s", "chunks/CPU s"],
        [
            [
                "pipeline (sync_paths)",
                pipeline["wall_s"],
                pipeline["notes_per_s"],
                pipeline["chunks_per_s"],
                pipeline["cpu_s"],
                pipeline["chunks_per_cpu_s"],
            ],
            [
                "raw embedder.encode",
                raw["wall_s"],
                raw["notes_per_s"],
                raw["chunks_per_s"],
                raw["cpu_s"],
                raw["chunks_per_cpu_s"],
            ],
        ],
    )
    verdict = "OK" if min(result["ratio_wall"], result["ratio_cpu"]) >= result["target"] else "BELOW TARGET"
    print(
        f"ratio pipeline/raw: {result['ratio_wall']:.3f} (wall), {result['ratio_cpu']:.3f} (CPU); "
        f"target ≥ {result['target']}: {verdict}"
    )
    tokens = result["tokens"]
    print(
        f"tokens through the model: {tokens['real']} real; padded {tokens['raw_padded']} (raw, one call), "
        f"{tokens['pipeline_padded']} (pipeline, {tokens['pipeline_encode_calls']} calls)"
    )
    print()
    wall = pipeline["wall_s"]
    rows = [
        [name, step["wall_s"], step["cpu_s"], f"{100 * step['wall_s'] / wall:.1f}%", step["calls"]]
        for name, step in result["steps"].items()
    ]
    print_table(["step (median run)", "wall s", "CPU s", "% of pipeline", "calls"], rows)


if __name__ == "__main__":
    sys.exit(main())
