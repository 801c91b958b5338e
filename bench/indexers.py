"""How a first index scales with the number of indexer processes on one Redis (issue #34, server mode).

A generated vault (``bench/make_vault.py``, notes only) is indexed from an empty data folder by N real indexer
processes (``python -m workers.indexer``) sharing one Redis and one catalog, each with ``--threads`` torch
threads; the embedding cache starts empty. There is no Qdrant server binary on these machines: each indexer
writes its own embedded store (in server mode they would share one collection; the store's writes are a few
percent of the time, the encoding the rest). Prints notes/s for each N and the ratio to one indexer.

    PYTHONPATH=. .venv/bin/python bench/indexers.py --notes 300 --runs "1x2,2x1"
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, machine

sys.path.insert(0, str(ROOT))


def _run(vault: Path, work: Path, processes: int, threads: int) -> dict[str, float]:
    from services.catalog import Catalog
    from services.config import Settings
    from services.system.queues import Queues
    from workers.redis_server import start_private_redis

    data = work / f"data-{processes}x{threads}"
    shutil.rmtree(data, ignore_errors=True)
    settings = Settings(vault=vault, data_dir=data, attachments=[])
    redis = start_private_redis(settings.model_copy(update={"data_dir": data / "host"}))
    env = {
        "PATH": "/usr/bin:/bin", "HOME": str(work), "OBSIRAG_VAULT": str(vault), "OBSIRAG_DATA_DIR": str(data),
        "OBSIRAG_REDIS_URL": redis.url, "OBSIRAG_ATTACHMENTS": "", "OBSIRAG_TORCH_THREADS": str(threads),
        "OBSIRAG_DATA_ROOT": str(work / "root"),
    }  # fmt: skip
    notes = sum(1 for _ in vault.rglob("*.md"))
    started = time.monotonic()
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "workers.indexer"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env | {"OBSIRAG_QDRANT_PATH": str(data / f"store-{i}")},
        )
        for i in range(processes)
    ]
    queues = Queues(settings.model_copy(update={"redis_url": redis.url}))
    catalog = None
    try:
        while True:
            time.sleep(0.5)
            if catalog is None and settings.catalog_path.exists():
                catalog = Catalog(settings.catalog_path)
            if catalog is not None and catalog.note_count() >= notes and queues.index.pending_count() == 0:
                break
        seconds = time.monotonic() - started
    finally:
        for child in children:
            child.terminate()
        for child in children:
            child.wait(60)
        redis.stop()
    return {"processes": processes, "threads": threads, "seconds": round(seconds, 1), "notes_per_s": notes / seconds}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--runs", default="1x2,2x1", help="processes x threads, comma-separated")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="obsirag-indexers-"))
    vault = work / "vault"
    subprocess.run([sys.executable, str(ROOT / "bench" / "make_vault.py"), "--notes", str(args.notes),
                    "--out", str(vault)], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)  # fmt: skip
    results = []
    for run in args.runs.split(","):
        processes, threads = (int(x) for x in run.split("x"))
        results.append(_run(vault, work, processes, threads))
        print(json.dumps(results[-1]), flush=True)
    base = results[0]["notes_per_s"]
    for result in results:
        print(f"{result['processes']} indexer(s) x {result['threads']} thread(s): {result['notes_per_s']:.2f} notes/s, "
              f"x{result['notes_per_s'] / base:.2f} ({result['seconds']} s, first index with start-up)")  # fmt: skip
    print(machine())
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
