"""The first searches on a store Edge has just opened, with and without its files read into the page cache first
(#34, ``services/retrieval/store/page_cache.py``).

Edge drops a shard's pages from the system's cache when it closes it, so every restart and every build leaves
the store cold. On a store ``bench/vault_scale.py`` indexed (the system stopped), in this process:

1. **cold**: the store opened, then the searches (the titles' first words, as ``vault_scale`` searches);
2. **warmed**: closed (its pages dropped), opened again, ``warm_pages`` timed, then the same searches;
3. **cold again**: closed, opened, the same searches: what the first arm paid beside this process's own first
   calls (the model's, Python's), which the second and third arms no longer pay.

    .venv/bin/python bench/store_warmth.py --vault /tmp/vault-50k --data /tmp/vs50k-data
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import hermetic_environment, machine, print_table, write_results
from _vault_measures import search_latency

WARM_UP = ("zorglub quintessence", "wibble frobnicate")  # the model's and the engine's first calls, not the store's


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, required=True, help="the vault the store indexed")
    parser.add_argument("--data", type=Path, required=True, help="its data folder (the system stopped)")
    parser.add_argument("--queries", type=int, default=200)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    hermetic_environment()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from services.config import load_settings
    from services.retrieval.embedding import load_embedder

    settings = load_settings(vault=args.vault, data_dir=args.data)
    embedder = load_embedder(settings.embedding_model, threads=settings.torch_threads, cache=settings.model_cache)
    arms: dict[str, Any] = {}
    for arm, warm in (("cold", False), ("warmed", True), ("cold again", False)):
        arms[arm] = searches(settings, embedder, args.queries, warm)
        print(f"{arm}: p95 {arms[arm]['search']['p95']:.1f} ms", flush=True)
    cold_p95 = max(arms["cold"]["search"]["p95"], arms["cold again"]["search"]["p95"])
    result = {
        "machine": machine(),
        "store": str(settings.store_path),
        "queries": arms["cold"]["search"]["n"],
        "arms": arms,
        "ratio_cold_to_warmed_p95": round(cold_p95 / arms["warmed"]["search"]["p95"], 2),
    }
    report(result)
    print(f"\nresults: {write_results('store_warmth', result)}")
    return 0


def searches(settings: Any, embedder: Any, count: int, warm: bool) -> dict[str, Any]:
    """The store opened (cold: the last close dropped its pages), warmed first where asked, then ``vault_scale``'s
    ``count`` searches, asked of the engine itself rather than through the queue."""
    from services.retrieval.search import SearchEngine, SearchRequest
    from services.retrieval.store import open_store
    from services.retrieval.store.edge_folder import live_dir
    from services.retrieval.store.page_cache import warm_pages

    store = open_store(settings)
    try:
        engine = SearchEngine(store, embedder)
        for query in WARM_UP:
            engine.search(SearchRequest(query=query, k=10))
        began, read = time.monotonic(), warm_pages(live_dir(settings.store_path)) if warm else 0
        warming = {"seconds": round(time.monotonic() - began, 2), "mb": round(read / 2**20)} if warm else None
        return {"search": search_latency(engine, settings, count), "warming": warming}
    finally:
        store.close()  # Edge drops the shard's pages: the next arm starts cold


def report(result: dict[str, Any]) -> None:
    rows = [
        (arm, figures["search"]["p50"], figures["search"]["p95"], figures["search"]["max"])
        for arm, figures in result["arms"].items()
    ]
    print()
    print_table(("searches on a store just opened (ms)", "p50", "p95", "max"), rows)
    warming = result["arms"]["warmed"]["warming"]
    ratio = result["ratio_cold_to_warmed_p95"]
    print(f"\nwarming: {warming['mb']} MB in {warming['seconds']} s; cold p95 / warmed p95 {ratio}")


if __name__ == "__main__":
    raise SystemExit(main())
