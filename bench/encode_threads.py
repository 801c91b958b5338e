"""The indexing encode on several cores (issue #34): texts/s of e5 encoding a vault's chunks with one torch thread
(the baseline), with two torch threads in one call, and with two threads of one torch thread each sharing the
batches (``passage_threads``, the indexer's way), on an idle machine and beside a process that keeps one core
busy (NER, OCR or a store build in the running system); and a search's query latency (p50/p95) on another
thread meanwhile. All in this process, one after the other, so the ratios hold on a noisy machine.

    .venv/bin/python bench/make_vault.py --notes 1000 --out /tmp/vault-1k
    .venv/bin/python bench/encode_threads.py --vault /tmp/vault-1k
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import hermetic_environment, machine, percentiles, print_table, write_results
from index_throughput import chunk_texts

WAYS = ("one torch thread", "two torch threads", "two threads sharing the batches")
STEP = 64  # texts per encode call: about what one sync of 16 notes embeds
QUERY_PAUSE = 0.3  # seconds between two queries: a user's searches, not a flood


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--notes", type=int, default=30, help="notes whose texts are encoded again and again")
    parser.add_argument("--queries", type=int, default=30)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    hermetic_environment()
    from services.config import Settings
    from services.retrieval.e5.embedder import E5Embedder

    settings = Settings(vault=args.vault, data_dir=Path("/tmp/obsirag-bench-threads"))
    embedder = E5Embedder(settings.embedding_model)
    paths = sorted(p.relative_to(args.vault).as_posix() for p in args.vault.rglob("*.md"))[: args.notes]
    texts = chunk_texts(settings, embedder, paths)
    embedder.encode(texts[:8])
    sys.setswitchinterval(0.0001)  # as the indexer runs (workers/indexer.py)
    rows, result = [], {"machine": machine(), "texts": len(texts), "figures": {}}
    for busy in (False, True):
        for way in WAYS:
            figures = measure(embedder, texts, way, busy, args.queries)
            result["figures"][f"{way}{', a core busy' if busy else ''}"] = figures
            rows.append(
                (way, "yes" if busy else "no", figures["texts_per_s"], figures["query"]["p50"], figures["query"]["p95"])
            )
    print_table(["encode", "a core busy", "texts/s", "query p50 ms", "query p95 ms"], rows)
    print(f"results: {write_results('encode_threads', result)}")
    return 0


def measure(embedder: Any, texts: list[str], way: str, busy: bool, queries: int) -> dict[str, Any]:
    """Encode ``texts`` in a loop on one thread while this one times ``queries`` queries."""
    from services.retrieval.torch_threads import use_threads

    embedder.passage_threads = 2 if way == WAYS[2] else 1
    stop, encoded = threading.Event(), []

    def encode_loop() -> None:
        began, count = time.perf_counter(), 0
        while not stop.is_set():
            part = texts[count % len(texts) :][:STEP] or texts[:STEP]
            if way == WAYS[1]:
                _on_two_torch_threads(embedder, part)
            else:
                embedder.encode(part)
            count += len(part)
        encoded.append(count / (time.perf_counter() - began))

    burner = multiprocessing.Process(target=_burn, daemon=True) if busy else None
    if burner:
        burner.start()
    loop = threading.Thread(target=encode_loop)
    loop.start()
    use_threads(1)
    latencies = []
    for n in range(queries):
        time.sleep(QUERY_PAUSE)
        began = time.perf_counter()
        embedder.encode_query(f"question {n} sur les impôts locaux")
        latencies.append((time.perf_counter() - began) * 1000)
    stop.set()
    loop.join()
    if burner:
        burner.terminate()
    return {"texts_per_s": round(encoded[0], 1), "query": percentiles(latencies)}


def _on_two_torch_threads(embedder: Any, texts: list[str]) -> None:
    """``E5Embedder.encode``'s batches, one after the other on this thread with two torch threads."""
    from services.retrieval.batches import length_batches
    from services.retrieval.torch_threads import use_threads

    use_threads(2)
    ids = embedder._encoder.token_ids(texts, "passage: ")
    for batch in length_batches([len(row) for row in ids], embedder.batch_size, embedder.batch_tokens):
        embedder._encoder.encode_ids([ids[i] for i in batch])


def _burn() -> None:
    while True:
        pass


if __name__ == "__main__":
    raise SystemExit(main())
