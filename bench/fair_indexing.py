"""Fair indexing (#41.4, #41.5): a small note saved while a big document indexes, and the indexer's memory after.

A real system (the supervisor of ``obsirag up`` with the indexer, watcher and extractor) on a copy of the sample
vault, the default embedding model:

1. baseline: small notes saved on the idle system, each timed from the write to the search finding it (watcher
   debounce → queue → index → search through the queue);
2. a digital PDF of ``--pages`` pages (default 2,000), or a note of ``--links`` wikilinks, dropped into the
   vault; once its text is read and the indexer embeds it, a small note saved every ``--every`` seconds,
   timed the same way; only the notes found while the document was still being indexed count;
3. the indexer's resident memory before the PDF, at its peak and once the document is indexed and the indexer
   idle: the ratio after / before (#41.5 wants at most 1.5).

Without the cut-in (``services.system.fresh_edits``) a note waited for the whole document: the document's own
indexing time, also printed.

    PYTHONPATH=. .venv/bin/python bench/fair_indexing.py
    PYTHONPATH=. .venv/bin/python bench/fair_indexing.py --pages 300 --every 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil
from _common import machine, print_table, write_results
from _system import start_system, stop_system, wait_until_ready

from tests.support import documents as docs

SAMPLE_VAULT = Path(__file__).resolve().parents[1] / "examples" / "vault"
WORKERS = ("indexer", "watcher", "extractor")
ENV = {
    "OBSIRAG_LEARN_ENABLED": "false",  # nothing else takes the cores: what is timed is the indexing
    "OBSIRAG_MEMORY_ENABLED": "false",
    "OBSIRAG_LLM_WARM_UP": "false",
    "OBSIRAG_RECONCILE_MINUTES": "60",
}
NAMES = "Zéphyrine Anatole Berthilde Casimir Eulalie Fulbert Gonzague Hortense Isidore Léocadie".split()
FOUND_WITHIN = 300.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--links", type=int, default=0, help="instead of the PDF: a note of this many wikilinks")
    parser.add_argument("--every", type=float, default=5.0, help="seconds between two small notes during the PDF")
    parser.add_argument("--baseline", type=int, default=3, help="small notes timed on the idle system")
    args = parser.parse_args()
    os.environ.update(ENV)
    with tempfile.TemporaryDirectory(prefix="fair-indexing-") as tmp:
        result = run(Path(tmp), args)
    report(result)
    write_results("fair_indexing", {"machine": machine(), **result})


def run(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    from services.config import load_settings
    from services.system import SystemClient

    vault = root / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    big = _big_file(root, args)
    settings = load_settings(vault=vault, data_dir=root / "data")
    log = root / "system.log"
    process = start_system(settings, WORKERS, log)
    try:
        client = SystemClient(settings)
        wait_until_ready(client, process, WORKERS, log)
        indexer = psutil.Process(_pid(client, "indexer"))
        idle = [_time_small_note(client, vault, f"idle-{n}", NAMES[n % len(NAMES)]) for n in range(args.baseline)]
        before = indexer.memory_info().rss
        return _during_document(client, settings, vault, big, indexer, args) | {
            "big": big.name,
            "size": f"{args.links} links" if args.links else f"{args.pages} pages",
            "idle_s": idle,
            "rss_before_mb": before / 1e6,
        }
    finally:
        stop_system(process)


def _big_file(root: Path, args: argparse.Namespace) -> Path:
    if not args.links:
        return docs.long_pdf(root / "Gros.pdf", args.pages)
    note = root / "Liens.md"
    links = (f"- [[Note {i}]] et [[Autre {i % 500}|un alias]]" for i in range(args.links))
    note.write_text("# Liens\n\n" + "\n".join(links) + "\n", encoding="utf-8")
    return note


def _during_document(
    client: Any, settings: Any, vault: Path, big: Path, indexer: psutil.Process, args: argparse.Namespace
) -> dict[str, Any]:
    from services.catalog import Catalog

    peak = _PeakWatch(indexer)
    peak.start()
    dropped = time.monotonic()
    shutil.copy(big, vault / big.name)
    catalog = Catalog(settings.catalog_path)
    read_at = 0.0 if big.suffix == ".md" else _until(lambda: _read(settings, big), 3600) - dropped
    under_load: list[float] = []
    n = 0
    while not _indexed(catalog, big.name):
        name = NAMES[n % len(NAMES)]
        elapsed = _time_small_note(client, vault, f"busy-{n}", name)
        if not _indexed(catalog, big.name):  # found while the document was still being indexed
            under_load.append(elapsed)
        n += 1
        time.sleep(args.every)  # the user's pace, not a synchronisation
    indexed_at = time.monotonic() - dropped
    _until(lambda: client.queues.index.pending_count() == 0, 60)
    time.sleep(2.0)  # the trim runs right after the task; RSS read a moment later
    peak.stop()
    catalog.close()
    return {
        "read_s": read_at,
        "document_indexed_s": indexed_at,
        "embedding_s": indexed_at - read_at,
        "under_load_s": under_load,
        "rss_peak_mb": peak.peak / 1e6,
        "rss_after_mb": indexer.memory_info().rss / 1e6,
    }


def _time_small_note(client: Any, vault: Path, stem: str, name: str) -> float:
    from services.retrieval.search import SearchRequest

    path = f"Fraîches/{stem}.md"
    (vault / "Fraîches").mkdir(exist_ok=True)
    word = f"{name}{stem.replace('-', '')}"
    start = time.monotonic()
    (vault / path).write_text(f"# {stem}\n\n{word} a rangé les bocaux de confiture dans le cellier.\n")

    def found() -> bool:
        hits = client.search(SearchRequest(query=word, k=5)).results
        return any(hit.path == path for hit in hits)

    return _until(found, FOUND_WITHIN, step=0.05) - start


def _until(condition: Any, timeout: float, step: float = 0.5) -> float:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not true after {timeout:.0f} s")
        time.sleep(step)  # polling the running system: it signals nothing a bench could wait on
    return time.monotonic()


def _read(settings: Any, pdf: Path) -> bool:
    from services.attachments.cache import ExtractionCache
    from services.indexing.attachments import content_hash

    return ExtractionCache(settings.extraction_cache_path).get(content_hash(pdf)) is not None


def _indexed(catalog: Any, path: str) -> bool:
    record = catalog.get_note(path)
    return record is not None and record.status.value == "indexed"


def _pid(client: Any, name: str) -> int:
    from services.system.processes import read_process

    state = read_process(client.redis, name)
    assert state is not None, f"{name} is not running"
    return state.pid


class _PeakWatch(threading.Thread):
    def __init__(self, process: psutil.Process) -> None:
        super().__init__(daemon=True)
        self.process, self.peak, self.done = process, 0, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.2):
            self.peak = max(self.peak, self.process.memory_info().rss)

    def stop(self) -> None:
        self.done.set()
        self.join()


def report(result: dict[str, Any]) -> None:
    idle, busy = result["idle_s"], result["under_load_s"]
    rows = [
        ("small note, idle system: median (s)", f"{statistics.median(idle):.2f}"),
        (f"small note while {result['big']} ({result['size']}) indexes: median (s)", _median(busy)),
        ("… max (s)", f"{max(busy):.2f}" if busy else "–"),
        ("… notes timed", len(busy)),
        ("the big file: text read after (s)", f"{result['read_s']:.0f}"),
        ("the big file: indexed after (s), what a note waited before", f"{result['document_indexed_s']:.0f}"),
        ("indexer RSS before / peak / after (MB)", _rss(result)),
        ("after / before", f"{result['rss_after_mb'] / result['rss_before_mb']:.2f}"),
    ]
    print_table(("measure", "value"), rows)


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}" if values else "–"


def _rss(result: dict[str, Any]) -> str:
    return f"{result['rss_before_mb']:.0f} / {result['rss_peak_mb']:.0f} / {result['rss_after_mb']:.0f}"


if __name__ == "__main__":
    main()
