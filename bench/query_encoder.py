"""A search's query encode: multilingual-e5-small through ONNX Runtime (shipped) against torch (before).

Same process, same weights (the arrays both encoders read), the same real questions: the CNIL and
Service-Public benchmarks' queries (``../shared/eval/bench``; the sample vault's sentences where they are
absent), each encoded alone as a search encodes it, the two encoders in turns. Prints each one's p50 / p95,
their ratio, the least cosine between their vectors of a question, and the memory ONNX Runtime's session adds
(resident, measured around building a second one).

    .venv/bin/python bench/query_encoder.py                 # 300 questions × 3 rounds (~1 min)
    .venv/bin/python bench/query_encoder.py --queries 100 --rounds 5 --threads 2
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import numpy as np
from _beir import SHARED_BENCH, load_benchmark
from _common import french_sentences, hermetic_environment, machine, percentiles, print_table, write_results

ONNX = "ONNX Runtime (shipped)"
TORCH = "torch (before)"


def questions(count: int, seed: int = 0) -> list[str]:
    pool = [
        text
        for name in ("cnil-fr", "spf-fr")
        if (SHARED_BENCH / name).is_dir()
        for text in load_benchmark(SHARED_BENCH / name).queries.values()
    ] or french_sentences()
    return random.Random(seed).sample(pool, min(count, len(pool)))


def resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="a query's threads (OBSIRAG_TORCH_THREADS)")
    args = parser.parse_args()
    hermetic_environment()
    from services.config import MULTILINGUAL_EMBEDDING_MODEL
    from services.retrieval.e5.onnx_model import OnnxE5
    from services.retrieval.embedding import load_embedder
    from services.retrieval.torch_threads import use_threads

    e5 = load_embedder(MULTILINGUAL_EMBEDDING_MODEL, threads=args.threads)
    before = resident_mb()
    OnnxE5(e5._weights, args.threads).encode_ids([[0, 2]])
    session_mb = resident_mb() - before

    def with_torch(text: str) -> list[float]:
        use_threads(args.threads)
        return e5._encoder.encode([text], "query: ")[0].tolist()

    encoders: dict[str, Callable[[str], list[float]]] = {ONNX: e5.encode_query, TORCH: with_torch}
    texts = questions(args.queries)
    times: dict[str, list[float]] = {name: [] for name in encoders}
    vectors: dict[str, list[list[float]]] = {name: [] for name in encoders}
    for name in encoders:  # warm both
        encoders[name](texts[0])
    for round_ in range(args.rounds):
        for text in texts:
            for name in encoders if round_ % 2 == 0 else reversed(encoders):
                start = time.perf_counter()
                vector = encoders[name](text)
                times[name].append((time.perf_counter() - start) * 1000)
                if round_ == 0:
                    vectors[name].append(vector)
    cosines = np.sum(np.asarray(vectors[ONNX]) * np.asarray(vectors[TORCH]), axis=1)
    figures = {name: percentiles(samples) for name, samples in times.items()}
    rows = [[name, figures[name]["p50"], figures[name]["p95"]] for name in encoders]
    print(f"{len(texts)} questions × {args.rounds} rounds, {args.threads} thread(s), one question at a time")
    print_table(["query encoder", "p50 ms", "p95 ms"], rows)
    ratio = {p: figures[TORCH][p] / figures[ONNX][p] for p in ("p50", "p95")}
    print(f"torch ÷ ONNX Runtime: p50 {ratio['p50']:.2f}x, p95 {ratio['p95']:.2f}x")
    print(f"cosine(ONNX Runtime, torch): min {cosines.min():.6f} over {len(cosines)} questions")
    print(f"ONNX Runtime's session: +{session_mb:.0f} MB resident (the weights are shared)")
    results = {"machine": machine(), "threads": args.threads, "questions": len(texts), "rounds": args.rounds}
    results |= {"ms": figures, "ratio": ratio, "cosine_min": float(cosines.min()), "session_mb": session_mb}
    print(write_results("query_encoder", results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
