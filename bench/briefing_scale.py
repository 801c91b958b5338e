"""The daily briefing's deterministic part on a large vault: time and memory against every note held parsed.

The briefing lists yesterday's notes, the oldest open tasks and the week's newest notes. Its baseline here is
what it did before (2026-12-07): every note of the vault read and held parsed, twice. In this process, first
``gather`` (one walk and a stat per note; only notes whose bytes hold ``[ ]`` parsed; the 15 oldest tasks kept),
then the baseline's one pass; each with its wall time and the process's peak resident memory after it (the
peak only grows: ``gather`` runs first).

    .venv/bin/python bench/briefing_scale.py --vault /path/to/vault-50k   # from bench/make_vault.py
    .venv/bin/python bench/briefing_scale.py                              # a 5,000-note vault made here
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from _common import machine, print_table, write_results

from services.catalog import Catalog
from services.config import load_settings
from services.memory.briefing import gather
from services.vault import iter_vault_paths, read_note_if_readable
from services.vault.artifacts import is_generated


def peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def every_note_parsed(vault: Path, max_bytes: int) -> list[object]:
    """The baseline: what the briefing held before (each pass over the vault parsed and kept every note)."""
    paths = (path for path in iter_vault_paths(vault, []) if not is_generated(path))
    notes = (read_note_if_readable(vault, path, max_bytes) for path in paths)
    return [note for note in notes if note is not None]


def measure(vault: Path, data: Path) -> dict[str, dict[str, float]]:
    settings = load_settings(vault=vault, data_dir=data)
    catalog = Catalog(settings.catalog_path)
    now = datetime.now().astimezone()
    start, before = time.perf_counter(), peak_mb()
    briefing = gather(settings, catalog, now.date(), now)
    gathered = {"seconds": round(time.perf_counter() - start, 1), "peak_mb": peak_mb(), "start_mb": before}
    start = time.perf_counter()
    held = every_note_parsed(vault, settings.max_file_bytes)
    baseline = {"seconds": round(time.perf_counter() - start, 1), "peak_mb": peak_mb(), "notes": len(held)}
    catalog.close()
    tasks = {"listed": len(briefing.tasks), "more": briefing.more_tasks}
    return {"gather": gathered, "every_note_parsed": baseline, "tasks": tasks}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, help="a vault (default: 5,000 notes made by make_vault.py)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault = args.vault
        if vault is None:
            vault = Path(tmp) / "vault"
            here = Path(__file__).parent
            subprocess.run([sys.executable, here / "make_vault.py", "--notes", "5000", "--out", vault], check=True)
        result = measure(vault.resolve(), Path(tmp) / "data")
    gathered, baseline = result["gather"], result["every_note_parsed"]
    print_table(
        ["pass", "seconds", "peak resident MB after it"],
        [
            ["briefing's gather (one walk, boxes parsed)", gathered["seconds"], gathered["peak_mb"]],
            ["baseline: one pass, every note held parsed", baseline["seconds"], baseline["peak_mb"]],
        ],
    )
    ratio = baseline["seconds"] / gathered["seconds"]
    print(f"notes {baseline['notes']}, tasks {result['tasks']}, the baseline's time / gather's {ratio:.1f}")
    write_results("briefing_scale", {"machine": machine(), "vault": str(args.vault or "made"), **result})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
