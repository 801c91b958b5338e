"""A whole vault through the real system (issue #34): `obsirag up` on a vault of ``bench/make_vault.py``, from
an empty data folder, then a restart, on an idle machine.

1. **First index**: notes/s and chunks/s until every note is written (``obsirag status``'s progress sampled
   every few seconds: the ETA's error at 25 % done); every text embedded meanwhile (notes' and documents'
   chunks and summaries) per second against a raw encode of the same mix in this process (the ratio, target
   ≥ 0.85: ``_raw_encode.py``); when the documents' reading ends (never holding the notes back); with
   ``--probe``, a search's and a save's latency meanwhile (``IndexProbe``).
2. **Restart** on the unchanged vault: every process beating and the reconcile finished (seconds), and how many
   notes were written again (target 0: nothing re-embedded).
3. **A note saved** is searchable after (watcher → queue → index → search): p50/p95 of ``--saves`` saves, idle,
   then while a bulk reindex runs.
4. **Search** through the queue (p95 of ``--searches``), a **question** as ``obsirag ask`` asks it (the whole
   answer, p95 of ``--asks``), the **pages** (note viewer: a note, and one with a
   dangling link; the note picker filtered; graph, conversations, dashboard; loopback, so the client's time is
   the server's plus ~1 ms), the graph page after a save (the catalog changed since its graph was built), each
   process's **resident memory**, the **disk** used (per 10,000 notes).
5. **A folder renamed** (the biggest one) while the system runs: seconds until its notes are indexed under the new
   path, and the chunks embedded meanwhile (target 0: a move re-embeds nothing).

    .venv/bin/python bench/make_vault.py --notes 5000 --out /tmp/vault-5k
    .venv/bin/python bench/vault_scale.py --vault /tmp/vault-5k

A first index longer than a sitting (~3.5 h at 20,000 notes on 2 older cores) pauses at Ctrl-C or ``kill``: the
system stops, the part's figures are saved (``paused_at_seconds``, ``written``), and ``--resume`` on the same
``--data`` finishes it, its rates over what the resumed run writes:

    .venv/bin/python bench/vault_scale.py --vault /tmp/vault-20k --data /tmp/vs20k-data           # … kill -TERM
    .venv/bin/python bench/vault_scale.py --vault /tmp/vault-20k --data /tmp/vs20k-data --resume
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import ROOT, hermetic_environment, machine, print_table, write_results
from _raw_encode import raw_encode
from _system import start_system, stop_system
from _vault_measures import (
    IndexProbe,
    ask_latency,
    folder_rename,
    graph_after_saves,
    learner_selection,
    page_latency,
    process_memory,
    save_to_searchable,
    search_latency,
    wait,
)

SAMPLE_SECONDS = 3.0
WORKERS = ("watcher", "indexer", "ner", "extractor", "mlx_worker", "web", "learner")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--data", type=Path, help="the data folder (default: a fresh temporary one)")
    parser.add_argument(
        "--again",
        action="store_true",
        help="--data already holds this vault's index (a previous run's): no first index, the live figures only",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="--data holds a first index left unfinished (Ctrl-C pauses one, its part's figures saved): finish it, "
        "its rates over what this run writes",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting for the system (OBSIRAG_NAME), e.g. background_nice=0 to compare",
    )
    parser.add_argument(
        "--rename-notes",
        type=int,
        default=0,
        help="rename the folder (any depth) holding nearest this many notes (default: the biggest top-level one)",
    )
    parser.add_argument(
        "--reindex-wait",
        type=float,
        default=4 * 3600,
        help="seconds to wait for the bulk reindex to end; past them its pace is reported and it is abandoned",
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=3600,
        help="after the first index or the start (--again), seconds to wait at most for the store's last graph "
        "build (a user's steady state) before the live figures",
    )
    parser.add_argument(
        "--probe",
        action="store_true",
        help="during the first index, a search at each look at the status and a note saved every few looks "
        "(IndexProbe): what a user meets meanwhile",
    )
    parser.add_argument("--saves", type=int, default=20)
    parser.add_argument("--searches", type=int, default=100)
    parser.add_argument("--asks", type=int, default=10)
    parser.add_argument("--timeout-hours", type=float, default=6.0)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    hermetic_environment()
    # A pause by Ctrl-C or ``kill``, even of a run started in the background (which ignores SIGINT).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    for setting in args.set:
        name, _, value = setting.partition("=")
        os.environ[f"OBSIRAG_{name.upper()}"] = value
    sys.path.insert(0, str(ROOT))
    from services.config import load_settings
    from services.retrieval.store.edge_folder import NEXT_DIR
    from services.system import SystemClient

    data = args.data or Path(tempfile.mkdtemp(prefix="vault-scale-")) / "data"
    data.parent.mkdir(parents=True, exist_ok=True)  # its log goes beside it
    settings = load_settings(vault=str(args.vault), data_dir=str(data))
    client, log = SystemClient(settings), data.parent / "vault-scale.log"
    result: dict[str, Any] = {"vault": str(args.vault), "machine": machine(), "notes": _count_notes(args.vault)}
    result["settings"] = args.set
    before = _catalog_figures(settings) if args.resume else None  # read before the system opens it
    process = start_system(settings, WORKERS, log)
    try:
        if args.again:
            wait(lambda: _all_ready(client), 600, lambda: _waiting_for(client))
        else:
            say(f"first index of {result['notes']} notes…")
            probe = IndexProbe(client, settings) if args.probe else None
            result["first_index"] = first_index(client, process, args.timeout_hours * 3600, before, probe)
            if probe is not None:
                result["during_first_index"] = probe.figures()
            if "paused_at_seconds" in result["first_index"]:
                say(f"paused: {result['first_index']['written']}; the rest with --resume on this --data")
                print(write_results("vault_scale", result))
                return 0
            say(f"first index: {result['first_index']}; the store's last graph build…")
        # After a start too (--again), past its own work (the web's graph 20 s in, a build it may begin): searched
        # at once, the searches shared the processor with the graph's build (p95 39.9–82.2 ms, #34).
        result["settle_seconds"] = settle(settings, args.settle)
        say(f"settled in {result['settle_seconds']} s; saves, searches, pages…")
        result |= live_figures(client, settings, args)
    finally:
        stop_system(process)
    if result.get("reindex", {}).get("finished") is False:  # abandoned: its folder goes, as if never asked
        shutil.rmtree(settings.store_path / NEXT_DIR, ignore_errors=True)
    result["restart"] = restart(settings, SystemClient(settings), log)  # a fresh client: new Redis connections
    if not args.again:
        say(f"restart: {result['restart']}; raw encode…")
        result["raw_encode"] = raw_encode(settings)
        result["ratio"] = round(result["first_index"]["texts_per_s"] / result["raw_encode"]["texts_per_s"], 3)
    result["disk_mb"] = round(_du(settings.data_dir) / 1e6, 1)
    result["disk_mb_per_10k_notes"] = round(result["disk_mb"] * 10_000 / max(1, result["notes"]), 1)
    print(write_results("vault_scale", result))  # before the table: a figure missing loses nothing
    report(result)
    if args.data is None:
        shutil.rmtree(data.parent, ignore_errors=True)
    return 0


def say(line: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {line}", file=sys.stderr, flush=True)


def _count_notes(vault: Path) -> int:
    return sum(1 for _ in vault.rglob("*.md"))


def first_index(
    client: Any, process: Any, timeout: float, before: dict[str, int] | None = None, probe: IndexProbe | None = None
) -> dict[str, Any]:
    """Samples ``obsirag status`` until every note is written, then until the documents are read; ``before``:
    what an unfinished first index had written, left out of the rates; ``probe``: searches and saves meanwhile."""
    started = time.monotonic()
    samples: list[tuple[float, int, int, float | None]] = []  # (t, done, changed, eta)
    notes_at = docs_at = None
    try:
        while time.monotonic() - started < timeout:
            if process.poll() is not None:
                raise RuntimeError("the system stopped during the first index")
            status = client.status()
            t = time.monotonic() - started
            if status.sync is not None:
                samples.append((t, status.sync.done, status.sync.changed, status.sync.eta_seconds))
                if probe is not None:
                    probe.look()
            elif samples and notes_at is None and status.queues.get("index", {}).get("pending", 1) == 0:
                notes_at = t
            if notes_at is not None and status.extraction_backlog is None and not status.extractions:
                docs_at = t
                break
            time.sleep(SAMPLE_SECONDS)  # sampling what a user would see every few seconds
    except KeyboardInterrupt:  # paused (longer than a sitting: ~8 h at 50,000 notes on 2 cores); --resume goes on
        return _paused(client, time.monotonic() - started, samples, before)
    if notes_at is None:
        raise RuntimeError("the first index did not end in time")
    counts = _written_since(client.settings, before)
    return {
        "resumed_from": before,
        "notes_seconds": round(notes_at, 1),
        "documents_seconds": round(docs_at, 1) if docs_at is not None else None,
        "notes_per_s": round(counts["notes"] / notes_at, 2),
        "chunks": counts["chunks"],
        "chunks_per_s": round(counts["note_chunks"] / notes_at, 2),
        # every text the indexer embedded meanwhile: chunks and summaries, of notes and documents alike
        "texts": counts["chunks"] + counts["files"],
        "texts_per_s": round((counts["chunks"] + counts["files"]) / max(notes_at, docs_at or 0), 2),
        "eta_error_at_25_percent": _eta_error(samples, notes_at),
        "samples": samples,
    }


def _paused(client: Any, seconds: float, samples: list[Any], before: dict[str, int] | None) -> dict[str, Any]:
    """What a first index interrupted had written by then (this run's part, after ``before``)."""
    counts = _written_since(client.settings, before)
    return {
        "resumed_from": before,
        "paused_at_seconds": round(seconds, 1),
        "written": counts,
        "notes_per_s": round(counts["notes"] / seconds, 2),
        "texts_per_s": round((counts["chunks"] + counts["files"]) / seconds, 2),
        "samples": samples,
    }


def _written_since(settings: Any, before: dict[str, int] | None) -> dict[str, int]:
    """The catalog's figures (``_catalog_figures``) less those of an unfinished first index resumed."""
    counts = _catalog_figures(settings)
    return {name: count - before[name] for name, count in counts.items()} if before else counts


def settle(settings: Any, patience: float) -> float:
    """Seconds until the indexer's upkeep has built the graphs of what the first index wrote: it starts after
    two quiet looks a minute apart (store_upkeep), then works in a folder of its own until the switch."""
    from services.retrieval.store.edge_optimize import unfinished_builds
    from services.system.store_upkeep import CHECK_SECONDS, QUIET_CHECKS

    began = time.monotonic()
    while time.monotonic() - began < patience:
        quiet_over = time.monotonic() - began > (QUIET_CHECKS + 1) * CHECK_SECONDS
        if quiet_over and not unfinished_builds(settings.store_path):
            break
        time.sleep(SAMPLE_SECONDS)
    return round(time.monotonic() - began, 1)


def _catalog_figures(settings: Any) -> dict[str, int]:
    from services.catalog import Catalog

    catalog = Catalog(settings.catalog_path)
    try:
        conn = catalog.notes._conn()
        notes, note_chunks = conn.execute(
            "SELECT COUNT(*), TOTAL(chunk_count) FROM notes WHERE path LIKE '%.md'"
        ).fetchone()
        files, chunks = conn.execute("SELECT COUNT(*), TOTAL(chunk_count) FROM notes").fetchone()
    finally:
        catalog.close()
    return {"notes": int(notes), "note_chunks": int(note_chunks), "files": int(files), "chunks": int(chunks)}


def _eta_error(samples: list[tuple[float, int, int, float | None]], finished: float) -> float | None:
    """(predicted end − actual end) ÷ actual duration, from the first sample at 25 % done or more."""
    for t, done, changed, eta in samples:
        if changed and done / changed >= 0.25 and eta is not None:
            return round((t + eta - finished) / finished, 3)
    return None


def live_figures(client: Any, settings: Any, args: argparse.Namespace) -> dict[str, Any]:
    saved_idle = save_to_searchable(client, settings, args.saves, "idle")
    searches = search_latency(client, settings, args.searches)
    asks = ask_latency(client, settings, args.asks)
    pages = page_latency(client, settings)
    graph_saved = graph_after_saves(client, settings)
    memory, anonymous = process_memory(client)
    selection = learner_selection(settings)
    renamed = folder_rename(client, settings, args.rename_notes)
    began = time.monotonic()
    client.reindex()  # a bulk reindex beside the live index: the saves must not wait for it
    saved_busy = save_to_searchable(client, settings, max(5, args.saves // 2), "reindex")
    reindex = reindex_pace(client, began, args.reindex_wait)  # done before the restart, which must find nothing to do
    return {
        "save_idle": saved_idle,
        "save_during_reindex": saved_busy,
        "reindex_seconds": reindex["seconds"] if reindex["finished"] else None,
        "reindex": reindex,
        "search": searches,
        "ask": asks,
        "pages": pages,
        "graph_after_save": graph_saved,
        "rss_mb": memory,
        "anon_mb": anonymous,
        "learner_selection": selection,
        "folder_rename": renamed,
    }


def reindex_pace(client: Any, began: float, patience: float) -> dict[str, Any]:
    """Waits up to ``patience`` seconds (from ``began``, when it was asked) for the reindex to end; its pace
    either way. Its task may still be queued when first looked at: it has ended when no rebuild shows and the
    index queue is empty (a restart must find nothing left to do)."""
    progress = None
    while time.monotonic() - began < patience:
        status = client.status()
        progress = status.rebuild or progress
        if _index_idle(status):
            break
        time.sleep(SAMPLE_SECONDS)
    seconds = time.monotonic() - began
    finished = _index_idle(client.status())
    done = (progress.total if finished else progress.done) if progress else None
    return {
        "finished": finished,
        "seconds": round(seconds, 1),
        "notes_done": done,
        "notes_total": progress.total if progress else None,
        "notes_per_s": round(done / seconds, 2) if done else None,
    }


def _index_idle(status: Any) -> bool:
    return status.rebuild is None and _queue_empty(status)


def _queue_empty(status: Any) -> bool:
    return status.queues.get("index", {}).get("pending", 1) == 0


def restart(settings: Any, client: Any, log: Path) -> dict[str, Any]:
    """`obsirag up` again on the unchanged vault: until every worker beats and the reconcile has run."""
    from datetime import UTC, datetime

    from services.catalog import Catalog

    since = datetime.now(UTC)
    began = time.monotonic()
    process = start_system(settings, WORKERS, log)
    try:
        wait(lambda: _all_ready(client), 600, lambda: _waiting_for(client))
        ready = time.monotonic() - began
    finally:
        stop_system(process)
    catalog = Catalog(settings.catalog_path)
    try:
        rewritten = catalog.notes.written_since(since)
    finally:
        catalog.close()
    return {"ready_and_reconciled_seconds": round(ready, 1), "notes_written_again": rewritten}


def _all_ready(client: Any) -> bool:
    return not _waiting_for(client)


def _waiting_for(client: Any) -> str:
    """What a start is still waiting for ("" once every worker beats, the reconcile ran and left no index work)."""
    try:
        status = client.status()
    except Exception:  # Redis not up yet
        return "the system's status (Redis not up)"
    watcher = status.process("watcher")
    waits = [] if watcher and watcher.details.get("last_reconcile") else ["the watcher's reconcile"]
    waits += [] if _queue_empty(status) else [f"the index queue ({status.queues.get('index')})"]
    waits += [f"{name} beating" for name in WORKERS if not status.process(name)]
    return ", ".join(waits)


def _du(folder: Path) -> int:
    """Bytes on disk (blocks, as ``du`` counts them: the store's memory-mapped files are sparse)."""
    return sum(p.stat().st_blocks * 512 for p in folder.rglob("*") if p.is_file())


def report(result: dict[str, Any]) -> None:
    restarted = result["restart"]
    rows = [
        ("notes", result["notes"]),
        *(_first_index_rows(result) if "first_index" in result else []),
        *(_probe_rows(result["during_first_index"]) if "during_first_index" in result else []),
        ("settled before the live figures: the store's last graph build (s)", result.get("settle_seconds")),
        ("restart: ready and reconciled (s, target < 15)", restarted["ready_and_reconciled_seconds"]),
        ("restart: notes written again (target 0)", restarted["notes_written_again"]),
        ("save → searchable p95, idle (ms, target < 2000)", result["save_idle"]["p95"]),
        ("save → searchable p95, during a reindex (ms)", result["save_during_reindex"]["p95"]),
        ("reindex, every note from the embedding cache (s)", result["reindex_seconds"]),
        ("reindex pace (notes/s)", result["reindex"]["notes_per_s"]),
        ("search p95 (ms, target < 50)", result["search"]["p95"]),
        ("a question's whole answer p50 / p95 (ms)", f"{result['ask'].get('p50')} / {result['ask'].get('p95')}"),
        ("the guard's decisions", result["ask"]["decisions"]),
        *((f"page {name} p95 (ms, target < 300)", figures["p95"]) for name, figures in result["pages"].items()),
        *((f"page {name}, first after start (ms)", figures["first"]) for name, figures in result["pages"].items()),
        ("page graph after a save p95 (ms, target < 300)", result["graph_after_save"]["p95"]),
        ("learner's choice of notes for a cycle (ms)", result["learner_selection"]["ms"]),
        *((f"RSS {name} (MB)", mb) for name, mb in result["rss_mb"].items()),
        *((f"of which its own (RssAnon) {name} (MB)", mb) for name, mb in result.get("anon_mb", {}).items()),
        ("disk (MB per 10k notes)", result["disk_mb_per_10k_notes"]),
        ("folder rename: notes", result["folder_rename"]["notes"]),
        ("folder rename: indexed under the new name (s)", result["folder_rename"]["seconds"]),
        ("folder rename: chunks embedded (target 0)", result["folder_rename"]["chunks_embedded"]),
    ]
    print_table(["figure", "value"], rows)


def _probe_rows(during: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        ("during the first index: search p95 (ms)", during["search"].get("p95")),
        ("during the first index: save → searchable p95 (ms)", during["save"].get("p95")),
    ]


def _first_index_rows(result: dict[str, Any]) -> list[tuple[str, Any]]:
    first = result["first_index"]
    return [
        ("first index: notes written (s)", first["notes_seconds"]),
        ("first index: documents read (s)", first["documents_seconds"]),
        ("notes/s", first["notes_per_s"]),
        ("chunks/s (notes)", first["chunks_per_s"]),
        ("texts/s embedded (chunks and summaries, notes and documents)", first["texts_per_s"]),
        ("raw encode texts/s (the same mix)", result["raw_encode"]["texts_per_s"]),
        ("ratio (target ≥ 0.85)", result["ratio"]),
        ("ETA error at 25 %", first["eta_error_at_25_percent"]),
    ]


if __name__ == "__main__":
    raise SystemExit(main())
