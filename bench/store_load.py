"""An Edge shard's load and search time, plain (as written) and built (its search graphs made), for the same points
(#34, ``services/indexing/next_graphs.py``).

A rebuild switched its next shard in as written: one plain segment, which Edge's load turns into an in-memory
lexical index and in-memory payload indexes at every start, and which every search scans whole, until the
store's upkeep builds it. At 50,000 notes a restart right after a reindex spent 9 s in that load. In this
process: ``--points`` chunk-shaped points (dense vectors clustered as e5's are, ``_vectors``; lexical vectors of
~450 terms as real chunks have; the payload fields the indexer writes) are written through ``EdgeStore``; the
shard is loaded ``--loads`` times and searched (dense queries near stored points), plain; ``optimize_beside``
builds it (the time a rebuild now waits before its switch); then it is loaded and searched again. The store's
files stay in the page cache between the loads.

    .venv/bin/python bench/store_load.py --points 363000
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _common import machine, percentiles, print_table, write_results
from _vectors import near_queries, synthetic_vectors

DIM = 384
VOCABULARY = 200_000
WRITE_BATCH = 512


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--points", type=int, default=100_000, help="chunks in the shard (363,000 at 50,000 notes)")
    parser.add_argument("--loads", type=int, default=3, help="loads timed in each state (the median is kept)")
    parser.add_argument("--searches", type=int, default=50, help="dense and lexical searches in each state")
    parser.add_argument("--data", type=Path, help="where to write the store (default: a temporary folder)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    folder = args.data or Path(tempfile.mkdtemp(prefix="store-load-"))
    rng = np.random.default_rng(1)
    dense, titles = (synthetic_vectors(rng, args.points, DIM) for _ in range(2))
    queries = near_queries(rng, dense, args.searches)
    try:
        began = time.monotonic()
        write_points(folder, dense, titles)
        written = time.monotonic() - began
        print(f"{args.points} points written in {written:.0f} s", flush=True)
        plain = measure(folder, args.loads, queries)
        print(f"plain: load {plain['load_s']} s", flush=True)
        build = build_graphs(folder)
        print(f"built in {build:.0f} s", flush=True)
        built = measure(folder, args.loads, queries)
    finally:
        if args.data is None:
            shutil.rmtree(folder, ignore_errors=True)
    result = {
        "machine": machine(),
        "points": args.points,
        "write_seconds": round(written, 1),
        "build_seconds": round(build, 1),
        "plain": plain,
        "built": built,
        "ratio_plain_to_built_load": round(plain["load_s"] / built["load_s"], 2),
    }
    report(result)
    print(f"\nresults: {write_results('store_load', result)}")
    return 0


def write_points(folder: Path, dense: np.ndarray, titles: np.ndarray) -> None:
    from services.retrieval.store import EdgeStore

    store = EdgeStore(folder)
    try:
        store.ensure_collection(DIM, "synthetic")
        batch: list[Any] = []
        for point in synthetic_points(dense, titles):
            batch.append(point)
            if len(batch) == WRITE_BATCH:
                store.upsert(batch)
                batch = []
        if batch:
            store.upsert(batch)
    finally:
        store.close()


def synthetic_points(dense: np.ndarray, titles: np.ndarray, seed: int = 1) -> Iterator[Any]:
    """Chunks of notes of seven chunks each, shaped like ``services.indexing.points``' (values are random)."""
    from services.retrieval.models import SparseVector, StorePoint
    from services.retrieval.store.base import point_id

    rng, pick = np.random.default_rng(seed), random.Random(seed)
    words = [f"mot{i}" for i in range(5_000)]
    for i in range(len(dense)):
        note, index = divmod(i, 7)
        path = f"Dossier {note % 40}/Sous-dossier {note % 7}/note {note}.md"
        # ~450 terms a chunk, as ``lexical.encode_document`` gives a 180-word French window with its sub-words
        # (median 470 over the sample vault), a third of them among the commonest words.
        terms = np.unique(np.concatenate([rng.integers(0, 2_000, 150), rng.integers(0, VOCABULARY, 300)]))
        payload = {
            "path": path,
            "title": f"note {note}",
            "aliases": [],
            "tags": [f"tag{note % 50}", "projet"],
            "folder": [f"Dossier {note % 40}", f"Dossier {note % 40}/Sous-dossier {note % 7}"],
            "type": "note",
            "created_ts": 1.6e9 + note * 600.0,
            "modified_ts": 1.7e9 + note * 60.0,
            "heading_path": ["Titre", f"Section {index}"],
            "chunk_index": index,
            "content_hash": f"{note:032x}",
            "text": " ".join(pick.choices(words, k=130)),
            "entities": [f"entité {note % 900}", f"personne {note % 300}"],
        }
        sparse = SparseVector(indices=terms.tolist(), values=rng.random(len(terms)).tolist())
        yield StorePoint(
            id=point_id(path, index), dense=dense[i].tolist(), sparse=sparse, payload=payload, title=titles[i].tolist()
        )


def measure(folder: Path, loads: int, queries: np.ndarray) -> dict[str, Any]:
    """The shard's load (``EdgeStore``'s open: Edge's load and nothing else) and searches on it."""
    from services.retrieval.models import SparseVector
    from services.retrieval.store import EdgeStore
    from services.retrieval.store.edge_folder import live_dir

    seconds = []
    for _ in range(loads):
        began = time.monotonic()
        store = EdgeStore(folder)
        seconds.append(time.monotonic() - began)
        store.close()
    store, rng = EdgeStore(folder), np.random.default_rng(7)
    try:
        segments = len(list((live_dir(folder) / "segments").iterdir()))
        dense, lexical = [], []
        for query in queries:
            began = time.monotonic()
            store.search_dense(query.tolist(), None, 50, fields=("path",))
            dense.append((time.monotonic() - began) * 1000)
            terms = sorted({int(t) for t in rng.integers(0, 300, 6)})
            began = time.monotonic()
            store.search_sparse(SparseVector(indices=terms, values=[1.0] * len(terms)), None, 50, fields=("path",))
            lexical.append((time.monotonic() - began) * 1000)
    finally:
        store.close()
    return {
        "load_s": round(statistics.median(seconds), 2),
        "loads_s": [round(s, 2) for s in seconds],
        "segments": segments,
        "dense_ms": percentiles(dense),
        "lexical_ms": percentiles(lexical),
    }


def build_graphs(folder: Path) -> float:
    from services.retrieval.store import EdgeStore

    store = EdgeStore(folder)
    try:
        began = time.monotonic()
        if not store.optimize_beside():
            raise SystemExit("the build did not replace the shard")
        return time.monotonic() - began
    finally:
        store.close()


def report(result: dict[str, Any]) -> None:
    plain, built = result["plain"], result["built"]
    print_table(
        ["figure", "plain (as a rebuild switched it in)", "built"],
        [
            ("load (median s)", plain["load_s"], built["load_s"]),
            ("segments", plain["segments"], built["segments"]),
            ("dense search p95 (ms)", plain["dense_ms"]["p95"], built["dense_ms"]["p95"]),
            ("lexical search p95 (ms)", plain["lexical_ms"]["p95"], built["lexical_ms"]["p95"]),
        ],
    )
    print(f"load plain ÷ built: {result['ratio_plain_to_built_load']}; the build took {result['build_seconds']} s")


if __name__ == "__main__":
    raise SystemExit(main())
