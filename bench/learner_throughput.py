"""Learner throughput: notes processed per hour and the share of a cycle spent generating, bundled model.

Starts the real system (``obsirag up``: indexer, NER, mlx worker with the bundled SmolLM2-135M, learner
kept idle) on a copy of the sample vault, waits for the index, then runs learner cycles in this process
exactly as ``obsirag learn --once`` does (search through the indexer, generation through the mlx worker
at learner priority, fake web search). Each cycle processes ``--notes`` never-processed notes (pass 2)
and looks for synapses from as many notes. Pauses between model calls are set to 0 and added back in
the figures from ``OBSIRAG_LEARN_PAUSE_SECONDS``' default.

The generation share is the wall time inside model calls (queue wait included) over the cycle's wall
time. The extrapolation to Qwen2.5-7B-Instruct-4bit on Apple silicon takes the measured prompt and
completion token counts per note, an assumed prefill and decode rate (``--apple-prefill``,
``--apple-decode``; DESIGN.md measured ~25-28 tok/s decode on an M5) and keeps the measured
non-generation time per note (pessimistic: that CPU is faster than this one).

    .venv/bin/python bench/learner_throughput.py                  # 2 notes, 1 question each (~5-20 min here)
    .venv/bin/python bench/learner_throughput.py --notes 4 --questions 3 --max-tokens 128
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from _common import BENCH_DATA_ROOT, ROOT, SAMPLE_VAULT, hermetic_environment, machine, print_table, write_results

START_TIMEOUT = 600.0
OLD_MTIME = datetime(2026, 1, 1).timestamp()


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=2, help="notes per cycle (default 2)")
    parser.add_argument("--cycles", type=int, default=1, help="cycles to run (default 1)")
    parser.add_argument("--questions", type=int, default=1, help="questions per insight (default 1)")
    parser.add_argument("--max-tokens", type=int, default=48, help="tokens per model answer (default 48)")
    parser.add_argument("--context-tokens", type=int, default=1024, help="context window (default 1024)")
    parser.add_argument("--apple-prefill", type=float, default=400.0, help="assumed Qwen 7B prefill tok/s")
    parser.add_argument("--apple-decode", type=float, default=26.0, help="assumed Qwen 7B decode tok/s")
    return parser.parse_args(argv)


def environment(args: argparse.Namespace) -> dict[str, str]:
    return {
        "OBSIRAG_LEARN_ENABLED": "false",  # the learner process stays idle: this script drives the cycles
        "OBSIRAG_WEB_SEARCH_BACKEND": "fake",
        "OBSIRAG_LLM_MAX_TOKENS": str(args.max_tokens),
        "OBSIRAG_LLM_CONTEXT_TOKENS": str(args.context_tokens),
        "OBSIRAG_LEARN_QUESTIONS": str(args.questions),
        "OBSIRAG_LEARN_PAUSE_SECONDS": "0",
        "OBSIRAG_LEARN_FULLSCAN_PER_RUN": str(args.notes),
        "OBSIRAG_SYNAPSE_SAMPLE": str(args.notes),
        "OBSIRAG_HEARTBEAT_SECONDS": "0.5",
    }


def start_system(root: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    from services.llm.bundled import ensure_converted

    shutil.copytree(SAMPLE_VAULT, root / "vault")
    for path in (root / "vault").rglob("*"):
        os.utime(path, (OLD_MTIME, OLD_MTIME))  # nothing "changed lately": pass 2 picks the notes
    ensure_converted(BENCH_DATA_ROOT / "models")
    env = {**env, "OBSIRAG_DATA_ROOT": str(BENCH_DATA_ROOT)}  # its data dir is given: the root holds the models
    command = [sys.executable, "-m", "workers.cli", "up", "--vault", str(root / "vault"), "--data", str(root / "data")]
    log = (root / "system.log").open("wb")  # the workers' logs, kept out of the figures
    return subprocess.Popen(command, env={**os.environ, **env}, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)


def wait_ready(settings: Any) -> None:
    from services.catalog import Catalog
    from services.system import SystemClient
    from services.system.processes import read_process

    client = SystemClient(settings)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            alive = all(read_process(client.redis, name) for name in ("indexer", "mlx_worker", "ner"))
        except Exception:
            alive = False
        if alive and settings.catalog_path.exists():
            with Catalog(settings.catalog_path) as catalog:
                if catalog.note_count() >= 40 and client.queues.index.pending_count() == 0:
                    return
        if time.monotonic() > deadline:
            raise SystemExit("the system did not index the sample vault in time")
        time.sleep(0.5)  # polling the system's observable state


def run_cycles(settings: Any, cycles: int) -> list[dict[str, Any]]:
    from workers.learner import build_learner

    learner = build_learner(settings, threading.Event())
    runs = []
    now = datetime.now().astimezone()
    for index in range(cycles):
        started = time.perf_counter()
        report = learner.run_cycle(now + timedelta(hours=index))
        wall = time.perf_counter() - started
        meter = learner.deps.model.meter
        runs.append(
            {
                "wall_s": round(wall, 2),
                "generation_s": round(meter.seconds, 2),
                "calls": meter.calls,
                "prompt_tokens": meter.prompt_tokens,
                "completion_tokens": meter.completion_tokens,
                "notes": len(report.processed) + len(report.skipped) + len(report.failed),
                "insights": len(report.processed),
                "synapses": len(report.synapses),
                "skipped": report.skipped,
                "failed": report.failed,
                "pairs_rejected": report.pairs_rejected,
            }
        )
    learner.catalog.close()
    return runs


def summarise(runs: list[dict[str, Any]], args: argparse.Namespace, pause_default: float) -> dict[str, Any]:
    total = {key: sum(run[key] for run in runs) for key in ("wall_s", "generation_s", "calls", "notes")}
    total |= {key: sum(run[key] for run in runs) for key in ("prompt_tokens", "completion_tokens")}
    notes = max(1, total["notes"])
    pauses = pause_default * max(0, total["calls"] - len(runs))  # a pause before each call but a cycle's first
    other_per_note = (total["wall_s"] - total["generation_s"]) / notes
    prompt, completion = total["prompt_tokens"] / notes, total["completion_tokens"] / notes
    apple_gen = prompt / args.apple_prefill + completion / args.apple_decode
    return {
        "notes_per_hour": round(3600 * notes / total["wall_s"], 1),
        "notes_per_hour_with_default_pauses": round(3600 * notes / (total["wall_s"] + pauses), 1),
        "generation_share": round(total["generation_s"] / total["wall_s"], 3),
        "per_note": {
            "wall_s": round(total["wall_s"] / notes, 1),
            "generation_s": round(total["generation_s"] / notes, 1),
            "calls": round(total["calls"] / notes, 2),
            "prompt_tokens": round(prompt),
            "completion_tokens": round(completion),
        },
        "apple_qwen7b_4bit_estimate": {
            "assumed_prefill_tok_s": args.apple_prefill,
            "assumed_decode_tok_s": args.apple_decode,
            "generation_s_per_note": round(apple_gen, 1),
            "notes_per_hour": round(3600 / (other_per_note + apple_gen), 1),
            "notes_per_hour_with_default_pauses": round(
                3600 / (other_per_note + apple_gen + pause_default * total["calls"] / notes), 1
            ),
        },
    }


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    hermetic_environment()
    from services.config import Settings

    env = environment(args)
    os.environ.update(env)
    root = Path(tempfile.mkdtemp(prefix="obsirag-learner-bench-"))
    system = start_system(root, env)
    try:
        settings = Settings(vault=root / "vault", data_dir=root / "data")
        wait_ready(settings)
        runs = run_cycles(settings, args.cycles)
    finally:
        system.terminate()
        system.wait(60)
        shutil.rmtree(root, ignore_errors=True)
    summary = summarise(runs, args, Settings.model_fields["learn_pause_seconds"].default)
    print_table(
        ["notes", "wall s", "generation s", "share", "notes/h", "prompt tok/note", "completion tok/note"],
        [
            [
                sum(r["notes"] for r in runs),
                sum(r["wall_s"] for r in runs),
                sum(r["generation_s"] for r in runs),
                summary["generation_share"],
                summary["notes_per_hour"],
                summary["per_note"]["prompt_tokens"],
                summary["per_note"]["completion_tokens"],
            ]
        ],
    )
    apple = summary["apple_qwen7b_4bit_estimate"]
    print(
        f"Qwen2.5-7B-4bit on Apple silicon (estimate): {apple['notes_per_hour']} notes/h "
        f"({apple['notes_per_hour_with_default_pauses']} with default pauses)"
    )
    path = write_results(
        "learner_throughput", {"machine": machine(), "args": vars(args), "runs": runs, "summary": summary}
    )
    print(f"results: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
