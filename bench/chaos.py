"""The chaos check (#41): kill anything, lose nothing.

A real ``obsirag up`` on a copy of the sample vault with more notes and documents. Each round is a burst of
edits (notes created, edited, renamed, deleted; now and then a scan to read by OCR) and, at a random moment
in it, ``kill -9`` of a random process of the instance: the supervisor, Redis, a worker, or the OCR reader.
When the supervisor died, one ``obsirag up`` again. At the end the catalog and the store equal a clean
index of the same vault, no process of the instance is left, and no vault file was changed by ObsiRAG.

Run: ``make chaos`` (30 rounds) or ``PYTHONPATH=. .venv/bin/python bench/chaos.py --rounds 30``; a short
version (3 rounds) runs in the tests (``tests/e2e/test_chaos.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis

from bench._chaos import (
    ROOT,
    Edits,
    clean_index,
    differences,
    index_state,
    instance_processes,
    prepare_vault,
    tree_hashes,
    vault_changes,
    victims,
)
from services.attachments.cache import read_progress
from services.catalog import Catalog
from services.config import Settings
from services.indexing.reconcile import changed_paths
from services.system.processes import WORKERS, read_process
from services.system.queues import Queues

ROLES = ("supervisor", "redis", *WORKERS, "ocr")
SYSTEM_ENV = {
    "OBSIRAG_DEBOUNCE_SECONDS": "0.2",
    "OBSIRAG_HEARTBEAT_SECONDS": "0.5",
    "OBSIRAG_INDEX_RETRY_DELAY": "0.2",
    "OBSIRAG_RECONCILE_MINUTES": "60",  # no periodic reconcile repairs a loss within the run: recovery must
    "OBSIRAG_LEARN_ENABLED": "false",  # no background generation taking the cores the indexing needs
    "OBSIRAG_MEMORY_ENABLED": "false",
    "OBSIRAG_LLM_WARM_UP": "false",
    "OBSIRAG_PORT": "0",
    "OBSIRAG_LOG_LEVEL": "INFO",
    "PYTHONUNBUFFERED": "1",
}
START_TIMEOUT = 240.0
WANTED_SECONDS = 15.0
GONE_WITHIN = 5.0  # seconds: the supervisor's children after a kill -9 of it


@dataclass
class Round:
    number: int
    victim: str
    pid: int
    killed_after: float  # seconds into the burst
    edits: int
    gone_in: float | None = None  # the supervisor killed: seconds until no process of the instance was left
    restart_seconds: float | None = None  # then: `obsirag up` until its indexer beat


@dataclass
class Report:
    rounds: list[Round] = field(default_factory=list)
    files: int = 0
    edits: int = 0
    settle_seconds: float = 0.0
    differences: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)
    vault_changes: list[str] = field(default_factory=list)
    orphans_after_supervisor_kill: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not (self.differences or self.leftovers or self.vault_changes or self.orphans_after_supervisor_kill)


class Chaos:
    def __init__(self, root: Path, seed: int, env: dict[str, str], notes: int = 40) -> None:
        self.rng = random.Random(seed)
        self.vault, self.data, self.log = root / "vault", root / "data", root / "chaos.log"
        prepare_vault(self.vault, notes, self.rng)
        self.before = tree_hashes(self.vault)
        self.env = {**{k: v for k, v in env.items() if not k.startswith("OBSIRAG_")}, **SYSTEM_ENV}
        self.env["OBSIRAG_DATA_ROOT"] = env.get("OBSIRAG_DATA_ROOT", str(Path(tempfile.gettempdir()) / "obsirag-bench"))
        self.settings = Settings(vault=self.vault, data_dir=self.data)
        self.redis = redis.Redis.from_url(self.settings.effective_redis_url, socket_timeout=2)
        self.edits = Edits(self.vault, self.rng)
        self.process: subprocess.Popen[bytes] | None = None
        self.orphans: list[str] = []  # processes left 5 s after the supervisor's kill -9, this round

    def up(self) -> float:
        """``obsirag up``; the seconds until its indexer, watcher and extractor beat."""
        start = time.monotonic()
        command = [sys.executable, "-m", "workers.cli", "up", "--vault", str(self.vault), "--data", str(self.data)]
        with self.log.open("ab") as sink:
            self.process = subprocess.Popen(command, env=self.env, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
        self._wait(lambda: all(self._beats(n) for n in ("indexer", "watcher", "extractor")), "start", START_TIMEOUT)
        return time.monotonic() - start

    def round(self, number: int, pool: tuple[str, ...]) -> Round:
        burst = self.rng.uniform(2.0, 4.0)
        kill_at = self.rng.uniform(0.2, burst)
        start, done, killed = time.monotonic(), self.edits.count, None
        while time.monotonic() - start < burst or killed is None:
            self.edits.one()
            elapsed = time.monotonic() - start
            if killed is None and elapsed >= kill_at:
                # A role absent now (no reader at work, a child restarting): tried again at the next edit,
                # and after the burst and WANTED_SECONDS more, any role of the pool.
                killed = self.kill(pool if elapsed < burst + WANTED_SECONDS else ROLES, elapsed)
            time.sleep(self.rng.uniform(0.05, 0.4))  # a person's pace between two saves
        killed.number, killed.edits = number, self.edits.count - done
        if killed.victim == "supervisor":
            self._after_supervisor(killed)
        return killed

    def kill(self, pool: tuple[str, ...], after: float) -> Round | None:
        found = victims(self.data)
        choices = [role for role in pool if role in found]
        if not choices:
            return None  # between a child's death and its restart: the next edit tries again
        role = self.rng.choice(choices)
        with contextlib.suppress(ProcessLookupError):
            os.kill(found[role], signal.SIGKILL)
        return Round(0, role, found[role], round(after, 2), 0)

    def _after_supervisor(self, killed: Round) -> None:
        start = time.monotonic()
        assert self.process is not None
        self.process.wait()
        while instance_processes(self.data) and time.monotonic() - start < GONE_WITHIN:
            time.sleep(0.1)  # polling the process table: a death sends nothing to this process
        left = instance_processes(self.data)
        killed.gone_in = None if left else round(time.monotonic() - start, 2)
        self.orphans = [f"{p.pid} {' '.join(p.cmdline())[:80]}" for p in left]
        killed.restart_seconds = round(self.up(), 1)

    def settle(self, timeout: float) -> float:
        """Until nothing is queued or read and the catalog holds every file of the vault as it is."""
        start = time.monotonic()
        self._wait(lambda: self._settled() and self._settled(), "the index settled", timeout)
        return time.monotonic() - start

    def _settled(self) -> bool:
        queues = Queues(self.settings.model_copy(update={"redis_url": self.settings.effective_redis_url}))
        try:
            if any(queues.hueys[name].pending_count() for name in ("index", "extract")):
                return False
        except (redis.RedisError, OSError):
            return False
        if read_progress(self.settings.extraction_cache_path):
            return False
        with Catalog(self.settings.catalog_path) as catalog:
            return not changed_paths(self.settings, catalog)

    def stop(self) -> list[str]:
        """Ctrl-C to the supervisor; the processes of the instance still there after it exited."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(120)
        deadline = time.monotonic() + GONE_WITHIN
        while instance_processes(self.data) and time.monotonic() < deadline:
            time.sleep(0.1)
        return [f"{p.pid} {' '.join(p.cmdline())[:80]}" for p in instance_processes(self.data)]

    def _beats(self, name: str) -> bool:
        try:
            return read_process(self.redis, name) is not None
        except (redis.RedisError, OSError):
            return False

    def _wait(self, predicate: Any, what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"the supervisor exited ({self.process.returncode}) waiting for {what}: {self.log}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what}: not after {timeout:.0f} s (log: {self.log})")
            time.sleep(0.25)


def run_chaos(
    root: Path,
    rounds: int,
    seed: int = 0,
    pool: tuple[str, ...] = ROLES,
    env: dict[str, str] | None = None,
    embedder: Any = None,
    notes: int = 40,
    settle_timeout: float = 300.0,
    caches: Path | None = None,
    plan: tuple[str, ...] = (),
    settle_first: bool = True,
) -> Report:
    """The whole check in ``root``; ``embedder``: the index's model, loaded here when not given; ``plan``:
    the victims of the first rounds in order (the short version's), the others drawn from ``pool``."""
    started = time.monotonic()
    chaos = Chaos(root, seed, dict(os.environ) if env is None else env, notes)
    if caches is not None:  # the sample vault's texts embedded and its diagram read before (the tests')
        chaos.data.mkdir(parents=True, exist_ok=True)
        for name in (chaos.settings.embedding_cache_path.name, chaos.settings.extraction_cache_path.name):
            shutil.copyfile(caches / name, chaos.data / name)
    report = Report()
    try:
        chaos.up()
        if settle_first:  # else the first kills land in the start-up's indexing and reading, a harsher case
            chaos.settle(settle_timeout)
        for number in range(1, rounds + 1):
            # The role first, then the moment it can be killed: drawn among the processes alive at an
            # instant, the OCR reader (alive a second per scan) was almost never drawn.
            wanted = (plan[number - 1] if number <= len(plan) else chaos.rng.choice(pool),)
            report.rounds.append(chaos.round(number, wanted))
            report.orphans_after_supervisor_kill += chaos.orphans
            chaos.orphans = []
        report.settle_seconds = round(chaos.settle(settle_timeout), 1)
    finally:
        report.leftovers = chaos.stop()
    report.edits = chaos.edits.count
    report.vault_changes = vault_changes(chaos.before, tree_hashes(chaos.vault), set())
    if embedder is None:
        from services.retrieval.embedding import load_embedder

        embedder = load_embedder(chaos.settings.embedding_model)
    clean = clean_index(chaos.settings, root / "clean", embedder)
    found, reference = index_state(chaos.settings), index_state(clean)
    report.files = len(reference[0])
    report.differences = differences(found, reference)
    report.seconds = round(time.monotonic() - started, 1)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--notes", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="obsirag-chaos-") as folder:
        report = run_chaos(Path(folder), args.rounds, args.seed, notes=args.notes)
    for r in report.rounds:
        extra = f", gone in {r.gone_in} s, up again in {r.restart_seconds} s" if r.victim == "supervisor" else ""
        print(f"round {r.number:2d}: kill -9 {r.victim} (pid {r.pid}) {r.killed_after} s into {r.edits} edits{extra}")
    summary = {k: v for k, v in asdict(report).items() if k != "rounds"}
    print({**summary, "ok": report.ok})
    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"chaos-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps({**asdict(report), "ok": report.ok}, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"written {path}")
    sys.exit(0 if report.ok else 1)


if __name__ == "__main__":
    main()
