"""The Edge shard's dense vectors in memory as int8, the originals mapped from disk (issue #34): the search
process's memory, the searches' latency and their recall, against the float32 vectors cached as before.

One synthetic shard of ``--points`` points (e5-like dense vectors: cluster centres around a common direction,
noise, normalised; a path per point) is written and optimized twice in this process, with each layout; then each
is opened in a fresh child process, which runs the same ``--queries`` searches (neighbours of stored points, the
dense list's limit of a search), reports its resident memory (``RssAnon`` its own, ``RssFile`` the shard's files
mapped and paged in), the searches' p50/p95, and, after that, the overlap of each answer with an exact search
on the original vectors (recall).

    .venv/bin/python bench/store_memory.py                   # 60,000 points (~10,000 notes)
    .venv/bin/python bench/store_memory.py --points 300000   # about the 50,000-note store
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _common import ROOT, machine, percentiles, print_table, write_results
from _vectors import near_queries, synthetic_vectors

LAYOUTS = ("float32 cached (before)", "int8 in memory, originals on disk (shipped)")
BATCH = 2000


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--points", type=int, default=60_000)
    parser.add_argument("--dim", type=int, default=384, help="the bundled e5-small's size")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", nargs=2, metavar=("SHARD", "QUERIES"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.child:
        print(json.dumps(measure_child(Path(args.child[0]), Path(args.child[1]))))
        return 0
    rng = np.random.default_rng(args.seed)
    vectors = synthetic_vectors(rng, args.points, args.dim)
    queries = near_queries(rng, vectors, args.queries)
    folder = Path(tempfile.mkdtemp(prefix="store-memory-"))
    result: dict[str, Any] = {"machine": machine(), "points": args.points, "dim": args.dim, "layouts": {}}
    result["queries"] = args.queries
    try:
        np.save(folder / "queries.npy", queries)
        for quantized, layout in zip((False, True), LAYOUTS, strict=True):
            shard_dir, built = build(folder / f"shard-{int(quantized)}", vectors, quantized)
            figures = run_child(shard_dir, folder / "queries.npy")
            figures["build_s"], figures["disk_mb"] = built, round(_du(shard_dir) / 1e6, 1)
            result["layouts"][layout] = figures
            shutil.rmtree(shard_dir, ignore_errors=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    report(result)
    print(f"results: {write_results('store_memory', result)}")
    return 0


def build(shard_dir: Path, vectors: np.ndarray, quantized: bool) -> tuple[Path, float]:
    """The shard with the shipped ``shard_config`` (``quantized``) or without its dense quantization, optimized."""
    from qdrant_edge import EdgeShard, Point, UpdateOperation

    from services.retrieval.store.base import DENSE
    from services.retrieval.store.edge_folder import shard_config

    began = time.perf_counter()
    config = shard_config(vectors.shape[1], quantized)
    shard = EdgeShard.create(str(shard_dir), config)
    for start in range(0, len(vectors), BATCH):
        points = [
            Point(str(uuid.UUID(int=start + n + 1)), {DENSE: row.tolist()}, {"path": f"note-{(start + n) // 6}.md"})
            for n, row in enumerate(vectors[start : start + BATCH])
        ]
        shard.update(UpdateOperation.upsert_points(points))
    shard.optimize()
    shard.flush()
    shard.close()
    return shard_dir, round(time.perf_counter() - began, 1)


def run_child(shard_dir: Path, queries: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", str(shard_dir), str(queries)]
    completed = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(completed.stdout.strip().splitlines()[-1])


def measure_child(shard_dir: Path, queries_file: Path) -> dict[str, Any]:
    """In a fresh process: open the shard, time the searches, read this process's memory, then the recall."""
    from qdrant_edge import EdgeShard, QuantizationSearchParams, Query, QueryRequest, SearchParams

    from services.retrieval.search import CANDIDATES as LIMIT
    from services.retrieval.store.base import DENSE
    from services.retrieval.store.edge_folder import DENSE_SEARCH

    before = _memory_mb()
    began = time.perf_counter()
    shard = EdgeShard.load(str(shard_dir))
    load_s = time.perf_counter() - began
    loaded = {key: round(value - before.get(key, 0.0), 1) for key, value in _memory_mb().items()}
    queries, latencies, answers = np.load(queries_file), [], []
    for row in queries:
        began = time.perf_counter()
        request = QueryRequest(limit=LIMIT, query=Query.Nearest(row.tolist(), using=DENSE), params=DENSE_SEARCH)
        hits = shard.query(request)
        latencies.append((time.perf_counter() - began) * 1000)
        answers.append([str(hit.id) for hit in hits])
    memory = {key: round(value - before.get(key, 0.0), 1) for key, value in _memory_mb().items()}
    exact = SearchParams(exact=True, quantization=QuantizationSearchParams(ignore=True))
    overlap = []
    for row, answer in zip(queries, answers, strict=True):
        truth = shard.query(QueryRequest(limit=LIMIT, query=Query.Nearest(row.tolist(), using=DENSE), params=exact))
        overlap.append(len({str(hit.id) for hit in truth} & set(answer)) / LIMIT)
        top = str(truth[0].id)
        overlap[-1] = (overlap[-1], answer[:1] == [top])
    shard.close()
    return {
        "load_s": round(load_s, 2),
        "search_ms": percentiles(latencies),
        "memory_after_load_mb": loaded,
        "memory_mb": memory,
        "recall": round(float(np.mean([o for o, _ in overlap])), 4),
        "top1_same": round(float(np.mean([t for _, t in overlap])), 4),
    }


def _memory_mb() -> dict[str, float]:
    status = Path("/proc/self/status").read_text().splitlines()
    wanted = ("VmRSS", "RssAnon", "RssFile")
    fields = {line.split(":")[0]: line.split()[1] for line in status if line.startswith(wanted)}
    return {key: int(value) / 1024 for key, value in fields.items()}


def _du(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def report(result: dict[str, Any]) -> None:
    rows = [
        (
            layout,
            f["memory_after_load_mb"].get("RssFile"),
            f["memory_mb"].get("VmRSS"),
            f["memory_mb"].get("RssAnon"),
            f["memory_mb"].get("RssFile"),
            f["search_ms"]["p50"],
            f["search_ms"]["p95"],
            f["recall"],
            f["top1_same"],
            f["load_s"],
            f["build_s"],
            f["disk_mb"],
        )
        for layout, f in result["layouts"].items()
    ]
    headers = ["layout", "files MB loaded", "RSS MB", "own MB", "files MB", "p50 ms", "p95 ms", "recall", "top 1"]
    print(f"{result['points']} points of {result['dim']} dimensions, {result['queries']} searches")
    print_table([*headers, "load s", "build s", "disk MB"], rows)


if __name__ == "__main__":
    raise SystemExit(main())
