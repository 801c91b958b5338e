"""Memory consolidation: time and tokens per 100 changed notes with the bundled model, and the Apple extrapolation.

Copies ``--notes`` notes (the French eval vault when present, else the sample vault) into a temporary vault,
all changed an hour ago, then runs ``services.memory.consolidate.consolidate`` with the bundled SmolLM2-135M
in this process (``ask_backend``: the same prompt the ``generate`` queue would carry, without the queue) until
every note was read or ``--runs`` runs were made. One run reads as many notes as ``OBSIRAG_MEMORY_PROMPT_CHARS``
holds (each cut to ``OBSIRAG_MEMORY_NOTE_CHARS``), so the figures per 100 notes scale the measured per-note
cost. The extrapolation to Qwen2.5-7B-Instruct-4bit on Apple silicon takes the measured prompt and
completion tokens with an assumed prefill and decode rate (``--apple-prefill``, ``--apple-decode``).

    .venv/bin/python bench/memory_consolidation.py                  # 3 runs (~5-15 min on 2 shared cores)
    .venv/bin/python bench/memory_consolidation.py --runs 20 --notes 100
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from _common import SAMPLE_VAULT, hermetic_environment, machine, print_table, write_results

EVAL_VAULT = Path("/work/shared/eval/vaults/obsidian-help-fr")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=100, help="changed notes to consolidate (default 100)")
    parser.add_argument("--runs", type=int, default=3, help="most consolidation runs (default 3)")
    parser.add_argument("--vault", type=Path, default=EVAL_VAULT if EVAL_VAULT.is_dir() else SAMPLE_VAULT)
    parser.add_argument("--apple-prefill", type=float, default=400.0, help="assumed Qwen 7B prefill tok/s")
    parser.add_argument("--apple-decode", type=float, default=26.0, help="assumed Qwen 7B decode tok/s")
    return parser.parse_args(argv)


def changed_vault(source: Path, target: Path, notes: int, changed: datetime) -> int:
    """``notes`` Markdown files of ``source`` (cycled through when it has fewer), all changed at ``changed``."""
    files = sorted(p for p in source.rglob("*.md") if "obsirag" not in p.parts)
    for index in range(notes):
        original = files[index % len(files)]
        copy = target / f"{index // len(files)}" / original.relative_to(source)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(original, copy)
        os.utime(copy, (changed.timestamp(), changed.timestamp()))
    return notes


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    hermetic_environment()
    from services.catalog import Catalog
    from services.config import Settings
    from services.llm.bundled import ensure_converted
    from services.llm.configured_backend import open_backend
    from services.memory.consolidate import consolidate
    from services.memory.llm import ask_backend

    root = Path(tempfile.mkdtemp(prefix="obsirag-memory-bench-"))
    now = datetime.now().astimezone()
    changed_vault(args.vault, root / "vault", args.notes, now - timedelta(hours=1))
    settings = Settings(
        vault=root / "vault",
        data_dir=root / "data",
        data_root=Path(tempfile.gettempdir()) / "obsirag-bench",  # its model cache: converted once per machine
        memory_max_notes=args.notes,
        memory_daily_tokens=10**9,
    )
    ensure_converted(settings.model_cache)
    backend = open_backend(settings)
    started = time.perf_counter()
    backend.load()
    load_s = time.perf_counter() - started
    ask = ask_backend(backend)
    catalog = Catalog(settings.catalog_path)
    runs: list[dict[str, Any]] = []
    for _ in range(args.runs):
        started = time.perf_counter()
        report = consolidate(settings, catalog, ask, now)
        runs.append({**report.counters(), "seconds": round(time.perf_counter() - started, 2), "error": report.error})
        if report.notes == 0:
            break
    catalog.close()
    summary = summarise(runs, args)
    data = {
        "machine": machine(),
        "args": {k: str(v) for k, v in vars(args).items()},
        "load_seconds": load_s,
        "runs": runs,
        "summary": summary,
        "blas": backend.blas,
    }
    print_table(
        ["run", "notes", "prompt tok", "answer tok", "s", "added", "rejected"],
        [
            [
                i + 1,
                r["notes"],
                r["prompt_tokens"],
                r["completion_tokens"],
                r["seconds"],
                r["facts_added"],
                r["facts_rejected"],
            ]
            for i, r in enumerate(runs)
        ],
    )
    print_table(["per 100 notes", "value"], [[k, v] for k, v in summary.items()])
    print(write_results("memory_consolidation", data))
    shutil.rmtree(root, ignore_errors=True)


def summarise(runs: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, float]:
    notes = sum(r["notes"] for r in runs) or 1
    scale = 100 / notes
    prompt = sum(r["prompt_tokens"] for r in runs) * scale
    completion = sum(r["completion_tokens"] for r in runs) * scale
    return {
        "notes_measured": notes,
        "runs_per_100_notes": round(len([r for r in runs if r["notes"]]) * scale, 1),
        "seconds_per_100_notes": round(sum(r["seconds"] for r in runs) * scale, 1),
        "prompt_tokens_per_100_notes": round(prompt),
        "completion_tokens_per_100_notes": round(completion),
        "facts_added_per_100_notes": round(sum(r["facts_added"] for r in runs) * scale, 1),
        "rejected_per_100_notes": round(sum(r["facts_rejected"] for r in runs) * scale, 1),
        "apple_qwen7b_seconds_per_100_notes": round(prompt / args.apple_prefill + completion / args.apple_decode, 1),
    }


if __name__ == "__main__":
    main()
