"""Notes saved one after the other across a build of the store's search graphs, through `obsirag up` (#34).

The store's upkeep builds the graphs beside the live shard once a bulk of writes is over (a first index, an
import, NER's entities for many notes): a child process builds a copy, then the indexer puts it in place. On an
idle vault of 50,000 notes a save that came at that moment waited 8-10 s, and a search got no answer in 10 s.
On an indexed data folder (``bench/vault_scale.py --data``; the system stopped), this forgets the named entities
of ``--forget`` notes (NER reads them again and rewrites their chunks' payloads: the writes that make the upkeep
build), starts the system, and saves a note every ``--gap`` seconds until ``--after`` seconds past the build's
switch, each until a search finds it. Reported: every save's time (p50/p95/max), before, during and after the
build, and the searches that got no answer in time.

    .venv/bin/python bench/save_during_build.py --vault /tmp/vault-50k --data /tmp/v50k-data
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import ROOT, hermetic_environment, machine, percentiles, print_table, write_results
from _system import start_system, stop_system
from _vault_measures import save_times, wait
from vault_scale import WORKERS, _all_ready, _waiting_for


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True, help="a data folder the vault is indexed in")
    parser.add_argument("--forget", type=int, default=8000, help="notes whose entities NER reads again")
    parser.add_argument("--gap", type=float, default=1.5, help="seconds between a save found and the next")
    parser.add_argument("--after", type=float, default=30.0, help="seconds of saves after the build's switch")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds before giving up on a build")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    hermetic_environment()
    sys.path.insert(0, str(ROOT))
    from services.config import load_settings
    from services.system import SystemClient

    settings = load_settings(vault=str(args.vault), data_dir=str(args.data))
    forget_entities(settings.catalog_path, args.forget)
    client = SystemClient(settings)
    process = start_system(settings, WORKERS, args.data.parent / "save-during-build.log")
    try:
        wait(lambda: _all_ready(client), 600, lambda: _waiting_for(client))
        saves, build = saves_across_a_build(client, settings, args)
    finally:
        shutil.rmtree(settings.vault / "Bench", ignore_errors=True)  # the notes it saved
        stop_system(process)
    result = {"machine": machine(), "vault": str(args.vault), "forgotten": args.forget, "build": build}
    result["saves"] = saves
    for phase in ("before", "during", "after", "all"):
        times = [s["ms"] for s in saves if phase in ("all", s["phase"]) and s["ms"] is not None]
        result[phase] = percentiles(times)
    result["unanswered"] = sum(s["ms"] is None for s in saves)
    print(f"results: {write_results('save_during_build', result)}")
    report(result)
    return 0


def forget_entities(catalog: Path, notes: int) -> None:
    """NER's record of ``notes`` random notes dropped: its start reads them again (``notes_without_entities``)."""
    with sqlite3.connect(catalog) as conn:
        conn.execute(
            "DELETE FROM entity_runs WHERE rowid IN (SELECT rowid FROM entity_runs ORDER BY random() LIMIT ?)",
            (notes,),
        )


def saves_across_a_build(client: Any, settings: Any, args: argparse.Namespace) -> tuple[list[Any], dict[str, Any]]:
    """Saves until ``--after`` seconds past the switch; each with its phase (a build's folder seen at its start
    or end: during)."""
    from services.retrieval.store.edge_optimize import unfinished_builds

    began, saves = time.monotonic(), []
    seen: float | None = None
    switched: float | None = None
    while switched is None or time.monotonic() - switched < args.after:
        if time.monotonic() - began > args.timeout:
            break
        building = bool(unfinished_builds(settings.store_path))
        at = time.monotonic() - began
        try:
            ms: float | None = round(save_times(client, settings, 1, "build")[0])
        except TimeoutError:  # the search got no answer in ``search_timeout``
            ms = None
        building = building or bool(unfinished_builds(settings.store_path))
        if building and seen is None:
            seen = at
        if seen is not None and switched is None and not building:
            switched = time.monotonic()
        phase = "during" if building else ("after" if switched is not None else "before")
        saves.append({"at_s": round(at, 1), "ms": ms, "phase": phase})
        time.sleep(args.gap)
    ended = None if switched is None else round(switched - began, 1)
    return saves, {"seen_at_s": None if seen is None else round(seen, 1), "switched_by_s": ended}


def report(result: dict[str, Any]) -> None:
    rows = []
    for phase in ("before", "during", "after", "all"):
        figures = result[phase]
        rows.append((phase, figures.get("n", 0), figures.get("p50"), figures.get("p95"), figures.get("max")))
    print_table(["saves", "n", "p50 ms", "p95 ms", "max ms"], rows)
    print(f"the build: {result['build']}; searches unanswered in time: {result['unanswered']}")


if __name__ == "__main__":
    raise SystemExit(main())
