"""A start, saves and searches while the background workers are busy, with those workers at the others'
processor priority (``OBSIRAG_BACKGROUND_NICE=0``) and lowered (the default), on a vault already indexed
(the data of ``bench/vault_scale.py``).

Before each start every note's entities are marked stale in the catalog, so NER reads the whole vault again
beside everything timed, as after a first index or a change of NER model (the data stays valid: NER's
own start finds them and queues them). Then: every process ready (seconds from the start), the first save
after the start and ``--saves`` more (save → searchable through watcher, queue, index and search),
``--searches`` searches through the queue. Rounds alternate the two settings on the same data and machine
(same priority first); the report gives each setting's figures over its rounds and the ratios lowered ÷ same.

    .venv/bin/python bench/background_priority.py --vault /tmp/vault-5k --data /tmp/vs5k/data --rounds 2
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from _common import ROOT, hermetic_environment, machine, percentiles, write_results

SETTINGS = {"same": "0", "lowered": None}  # None: the shipped default


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True, help="a data folder holding this vault's index")
    parser.add_argument("--rounds", type=int, default=2, help="starts per setting")
    parser.add_argument("--saves", type=int, default=10)
    parser.add_argument("--searches", type=int, default=50)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    hermetic_environment()
    sys.path.insert(0, str(ROOT))
    samples: dict[str, dict[str, list[float]]] = {name: {} for name in SETTINGS}
    try:
        for _ in range(args.rounds):
            for name, nice in SETTINGS.items():
                figures = one_round(args, nice)
                print(f"[{time.strftime('%H:%M:%S')}] {name}: {figures}", file=sys.stderr, flush=True)
                for key, values in figures.items():
                    samples[name].setdefault(key, []).extend(values)
    finally:
        _entities_back(args.data / "catalog.sqlite3")
    result = {"machine": machine(), "vault": str(args.vault), "rounds": args.rounds}
    for name in SETTINGS:
        result[name] = {key: percentiles(values) for key, values in samples[name].items()}
    result["ratio_lowered_to_same"] = {
        key: {q: _ratio(result["lowered"][key][q], result["same"][key][q]) for q in ("p50", "p95")}
        for key in result["same"]
    }
    for key, ratios in result["ratio_lowered_to_same"].items():
        same, lowered = result["same"][key], result["lowered"][key]
        print(
            f"{key:>18}: same p50 {same['p50']:.0f} p95 {same['p95']:.0f} | lowered p50 {lowered['p50']:.0f} "
            f"p95 {lowered['p95']:.0f} | ratio p50 {ratios['p50']} p95 {ratios['p95']}"
        )
    write_results("background_priority", result)
    return 0


def one_round(args: argparse.Namespace, nice: str | None) -> dict[str, list[float]]:
    """One start with NER's whole backlog: the figures in milliseconds."""
    import os

    import vault_scale as scale
    from _system import start_system, stop_system
    from _vault_measures import save_times, search_times

    from services.config import load_settings
    from services.system import SystemClient

    os.environ.pop("OBSIRAG_BACKGROUND_NICE", None)
    if nice is not None:
        os.environ["OBSIRAG_BACKGROUND_NICE"] = nice
    settings = load_settings(vault=str(args.vault), data_dir=str(args.data))
    _entities_stale(settings.catalog_path)
    client = SystemClient(settings)
    began = time.monotonic()
    process = start_system(settings, scale.WORKERS, args.data.parent / "background-priority.log")
    try:
        scale.wait(lambda: scale._all_ready(client), 600, lambda: scale._waiting_for(client))
        ready = (time.monotonic() - began) * 1000
        saves = save_times(client, settings, 1 + args.saves, "nice")
        # Titles drawn at random: new to every round.
        searches = search_times(
            client, [p.stem for p in random.sample(list(settings.vault.rglob("*.md")), args.searches)]
        )
    finally:
        stop_system(process)
        shutil.rmtree(settings.vault / "Bench", ignore_errors=True)
    return {"ready": [ready], "first_save": saves[:1], "save": saves[1:], "search": searches}


def _entities_stale(catalog: Path) -> None:
    """Every note's entities read by another model, as far as NER's start can tell: it reads them all again.
    Their model's name is kept aside (``entity_runs_model``) for ``_entities_back``."""
    with sqlite3.connect(catalog) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS entity_runs_model AS SELECT path, model FROM entity_runs")
        conn.execute("UPDATE entity_runs SET model = 'stale' WHERE model != 'stale'")


def _entities_back(catalog: Path) -> None:
    """The data as the bench found it: the entities NER had not read again yet are current once more."""
    with sqlite3.connect(catalog) as conn:
        conn.execute(
            "UPDATE entity_runs SET model = (SELECT m.model FROM entity_runs_model m WHERE m.path = entity_runs.path)"
            " WHERE model = 'stale' AND path IN (SELECT path FROM entity_runs_model)"
        )
        conn.execute("DROP TABLE entity_runs_model")


def _ratio(lowered: float, same: float) -> float:
    return round(lowered / same, 3) if same else float("nan")


if __name__ == "__main__":
    raise SystemExit(main())
