"""multilingual-e5-small through ONNX Runtime (shipped) against torch (before): queries, passages, a first index.

Same process, same weights (the arrays both encoders read), the two encoders in turns:

1. queries: real questions, the CNIL and Service-Public benchmarks' (``../shared/eval/bench``; the sample
   vault's sentences where they are absent), each encoded alone as a search encodes it: p50 / p95 and ratio;
2. passages: the sample vault's chunks as the indexer cuts and batches them, on one thread: passages/s;
3. a first index of the sample vault through the real pipeline (parse, chunk, embed, store) with each: wall s.

Prints the least cosine between the two encoders' vectors of a text, and the memory ONNX Runtime's session
adds (resident, measured around building a second one).

    .venv/bin/python bench/e5_onnx.py                   # ~3 min
    .venv/bin/python bench/e5_onnx.py --queries 100 --rounds 5 --no-index
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from _beir import SHARED_BENCH, load_benchmark
from _common import french_sentences, hermetic_environment, machine, median, percentiles, print_table, write_results
from e5_engines import _chunks, _first_index

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


def in_turns(encoders: dict[str, Callable[[Any], Any]], items: Sequence[Any], rounds: int) -> tuple[dict, dict]:
    """Each item through each encoder, in turns (order flipped each round): ms per call, first round's outputs."""
    times: dict[str, list[float]] = {name: [] for name in encoders}
    outputs: dict[str, list[Any]] = {name: [] for name in encoders}
    for round_ in range(rounds):
        for item in items:
            for name in encoders if round_ % 2 == 0 else reversed(encoders):
                start = time.perf_counter()
                output = encoders[name](item)
                times[name].append((time.perf_counter() - start) * 1000)
                if round_ == 0:
                    outputs[name].append(output)
    return times, outputs


def least_cosine(outputs: dict[str, list[Any]]) -> float:
    ours, theirs = (
        np.vstack([np.asarray(v, dtype=np.float32).reshape(-1, 384) for v in outputs[n]]) for n in (ONNX, TORCH)
    )
    return float(np.sum(ours * theirs, axis=1).min())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-index", action="store_true", help="skip the first index of the sample vault")
    args = parser.parse_args()
    hermetic_environment()
    from services.config import MULTILINGUAL_EMBEDDING_MODEL
    from services.retrieval.batches import length_batches
    from services.retrieval.e5.onnx_model import OnnxE5
    from services.retrieval.embedding import load_embedder
    from services.retrieval.torch_threads import use_threads

    e5 = load_embedder(MULTILINGUAL_EMBEDDING_MODEL)
    before = resident_mb()
    OnnxE5(e5._weights).encode_ids([[0, 2]])
    session_mb = resident_mb() - before
    use_threads(1)
    engines = {ONNX: e5._onnx, TORCH: e5._encoder}
    results: dict[str, Any] = {"machine": machine(), "session_mb": session_mb}

    texts = questions(args.queries)
    query_ids = [e5._encoder.token_ids([text], "query: ") for text in texts]
    times, outputs = in_turns({n: engine.encode_ids for n, engine in engines.items()}, query_ids, args.rounds)
    results["queries"] = {name: percentiles(samples) for name, samples in times.items()}
    results["queries_cosine_min"] = least_cosine(outputs)

    chunks = _chunks(e5)
    ids = e5._encoder.token_ids(chunks, "passage: ")
    batches = [
        [ids[i] for i in batch] for batch in length_batches([len(r) for r in ids], e5.batch_size, e5.batch_tokens)
    ]
    times, outputs = in_turns({n: engine.encode_ids for n, engine in engines.items()}, batches, args.rounds)
    rate = {name: len(chunks) * args.rounds / (sum(samples) / 1000) for name, samples in times.items()}
    results["passages"] = {"chunks": len(chunks), "per_second": rate, "cosine_min": least_cosine(outputs)}

    rows = [[name, results["queries"][name]["p50"], results["queries"][name]["p95"], rate[name]] for name in engines]
    print(f"{len(texts)} questions and {len(chunks)} sample-vault chunks × {args.rounds} rounds, one thread")
    print_table(["e5 encoder", "query p50 ms", "query p95 ms", "passages/s"], rows)
    query_ratio = results["queries"][TORCH]["p50"] / results["queries"][ONNX]["p50"]
    print(
        f"ONNX Runtime against torch: queries {query_ratio:.2f}x faster (p50), passages {rate[ONNX] / rate[TORCH]:.2f}x"
    )
    print(f"least cosine between their vectors: queries {results['queries_cosine_min']:.6f}, passages "
          f"{results['passages']['cosine_min']:.6f}")  # fmt: skip
    print(f"ONNX Runtime's session: +{session_mb:.0f} MB resident (the weights are shared)")
    if not args.no_index:
        results["first_index"] = first_indexes(e5, engines)
    print(write_results("e5_onnx", results))
    return 0


def first_indexes(e5: Any, engines: dict[str, Any]) -> dict[str, list[float]]:
    """The sample vault indexed from scratch twice with each encoder for the passages, in turns: wall seconds."""
    from services.config import MULTILINGUAL_EMBEDDING_MODEL

    walls: dict[str, list[float]] = {name: [] for name in engines}
    for name in [*engines, *reversed(engines)]:
        e5._passages = engines[name]
        walls[name].append(_first_index(MULTILINGUAL_EMBEDDING_MODEL, e5)[0])
    e5._passages = engines[ONNX]
    print_table(["first index of the sample vault", "wall s (median of 2)"], [[n, median(w)] for n, w in walls.items()])
    print(f"torch ÷ ONNX Runtime: {median(walls[TORCH]) / median(walls[ONNX]):.2f}x")
    return walls


if __name__ == "__main__":
    raise SystemExit(main())
