"""What the benchmarks share: clocks, percentiles, machine facts, sample-vault text and result files.

Every bench measures its figure against a baseline taken in the same process and the same run, so a
busy machine slows both sides alike; CPU time (``time.process_time``) is recorded beside wall time
because on a shared 2-core box other people's processes inflate wall time far more than CPU time.
"""

from __future__ import annotations

import json
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_VAULT = ROOT / "examples" / "vault"
RESULTS = ROOT / "bench" / "results"
# The benches' data root: its model cache (``models/``) holds the bundled model, converted once per machine.
BENCH_DATA_ROOT = Path(tempfile.gettempdir()) / "obsirag-bench"

_FRONTMATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_SENTENCE = re.compile(r"(?<=[.!?…])\s+(?=[A-ZÀ-ÖØ-Þ«])")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_HEADING = re.compile(r"^ {0,3}#{1,6} ")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?|^>\s*")


def hermetic_environment() -> None:
    """Benchmarks run on their own temp folders with default settings: ignore the caller's OBSIRAG_*."""
    for key in [key for key in os.environ if key.startswith("OBSIRAG_")]:
        del os.environ[key]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # As under `make`: the processes a bench starts keep their compiled bytecode. Where the shell sets
    # PYTHONDONTWRITEBYTECODE, each start compiled every imported module again (a restart's 7 processes: 17
    # processor-seconds of imports instead of 7 on the 2-core AMD EPYC), a cost a user's start does not pay.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


# --- clocks and statistics ------------------------------------------------------------------------


@dataclass
class Span:
    """Wall and CPU seconds spent in one measured block."""

    wall: float = 0.0
    cpu: float = 0.0

    def add(self, other: Span) -> None:
        self.wall += other.wall
        self.cpu += other.cpu


@contextmanager
def measured() -> Iterator[Span]:
    """``with measured() as span:`` fills ``span.wall`` and ``span.cpu`` (whole process) when the block ends."""
    span = Span()
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield span
    finally:
        span.wall = time.perf_counter() - wall
        span.cpu = time.process_time() - cpu


@dataclass
class Stopwatch:
    """Accumulates time per label by wrapping callables (an attribute of a module or an object)."""

    spans: dict[str, Span] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    _restore: list[tuple[object, str, object]] = field(default_factory=list)

    def wrap(self, owner: object, name: str, label: str) -> None:
        original = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            with measured() as span:
                result = original(*args, **kwargs)
            self.spans.setdefault(label, Span()).add(span)
            self.calls[label] = self.calls.get(label, 0) + 1
            return result

        self._restore.append((owner, name, original))
        setattr(owner, name, timed)

    def reset(self) -> None:
        self.spans.clear()
        self.calls.clear()

    def unwrap(self) -> None:
        for owner, name, original in reversed(self._restore):
            setattr(owner, name, original)
        self._restore.clear()


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    """n, p50, p95, p99, mean and max of latency samples in milliseconds (linear interpolation)."""
    ordered = sorted(samples_ms)
    if not ordered:
        return {"n": 0}

    def quantile(q: float) -> float:
        position = q * (len(ordered) - 1)
        low = int(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

    return {
        "n": len(ordered),
        "p50": round(quantile(0.50), 2),
        "p95": round(quantile(0.95), 2),
        "p99": round(quantile(0.99), 2),
        "mean": round(sum(ordered) / len(ordered), 2),
        "max": round(ordered[-1], 2),
    }


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


# --- machine and results --------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    """What the figures depend on: CPUs, load when the run started, library versions, torch threads."""
    import torch

    return {
        "date": datetime.now().astimezone().isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "gpu": torch.cuda.is_available(),
    }


def write_results(name: str, data: dict[str, Any], path: Path | None = None) -> Path:
    """Write ``data`` as JSON to ``path`` (default ``bench/results/NAME-<timestamp>.json``)."""
    if path is None:
        RESULTS.mkdir(parents=True, exist_ok=True)
        path = RESULTS / f"{name}-{datetime.now():%Y%m%d-%H%M%S}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n", encoding="utf-8")
    return path


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A plain-text table with right-aligned figures, for the terminal."""
    cells = [[str(h) for h in headers], *[[_cell(value) for value in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for index, row in enumerate(cells):
        first = row[0].ljust(widths[0])
        print("  ".join([first, *(value.rjust(width) for value, width in zip(row[1:], widths[1:], strict=True))]))
        if index == 0:
            print("  ".join("-" * width for width in widths))


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
    return str(value)


# --- text from the sample vault -------------------------------------------------------------------


@dataclass
class SampleNote:
    """One note of examples/vault cut into its frontmatter and heading sections (for variants)."""

    path: str
    frontmatter: str
    sections: list[str]

    def text(self, sections: Sequence[str] | None = None) -> str:
        return self.frontmatter + "\n\n".join(s.strip("\n") for s in (self.sections if sections is None else sections))


def sample_notes(vault: Path = SAMPLE_VAULT) -> list[SampleNote]:
    """Every Markdown note of the sample vault, in path order."""
    notes = []
    for file in sorted(vault.rglob("*.md")):
        text = file.read_text(encoding="utf-8")
        match = _FRONTMATTER.match(text)
        frontmatter = match.group(0) if match else ""
        notes.append(SampleNote(file.relative_to(vault).as_posix(), frontmatter, _sections(text[len(frontmatter) :])))
    return notes


def _sections(body: str) -> list[str]:
    """The body cut before each heading line outside fenced code."""
    sections: list[list[str]] = [[]]
    in_code = False
    for line in body.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
        if not in_code and _HEADING.match(line) and any(s.strip() for s in sections[-1]):
            sections.append([])
        sections[-1].append(line)
    return ["\n".join(lines) for lines in sections if any(line.strip() for line in lines)]


def variant_vault(target: Path, notes: int, seed: int = 0) -> list[str]:
    """Write ``notes`` notes into ``target``: the sample vault once, then varied copies of its notes.

    A copy keeps a note's frontmatter (tags, dates, aliases) and first section, then one to three of
    its other sections, shuffled, under ``Variante NN/`` — the size of a typical personal note
    (150-400 words) rather than of the sample vault's three long essays. Returns the paths written.
    """
    rng = random.Random(seed)
    sources = sample_notes()
    written = []
    for i in range(notes):
        source = sources[i % len(sources)]
        copy = i // len(sources)
        if copy == 0:
            path, text = source.path, source.text()
        else:
            rest = source.sections[1:]
            chosen = rng.sample(rest, k=min(len(rest), rng.randint(1, 3)))
            path, text = f"Variante {copy:02d}/{source.path}", source.text(source.sections[:1] + chosen)
        file = target / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def french_sentences(vault: Path = SAMPLE_VAULT) -> list[str]:
    """Sentences of the sample vault's French notes: prose and list items (no tables, code or headings)."""
    sentences: list[str] = []
    for note in sample_notes(vault):
        if note.path.startswith("English/"):
            continue
        in_code = False
        for line in "\n".join(note.sections).splitlines():
            if _FENCE.match(line):
                in_code = not in_code
            text = _LIST_MARK.sub("", line).strip()
            if in_code or not text or text.startswith(("#", "|", "!", "---")):
                continue
            sentences += [s.strip() for s in _SENTENCE.split(text) if len(s.split()) >= 5]
    return sentences


def french_vault(target: Path, notes: int, seed: int = 0) -> int:
    """Write ``notes`` distinct French notes into ``target`` from the paragraphs of the eval data (the CNIL
    and Service-Public corpora, text nobody here wrote): each note a title, tags, a wikilink to an earlier
    note and 2–4 sections of 1–2 paragraphs drawn at random (~250–500 words, a personal note's size), so that
    no two notes share their text and an embedding cache cannot spare either model any work. Returns the
    number of words written."""
    from _beir import SHARED_BENCH, load_benchmark

    rng = random.Random(seed)
    paragraphs = [
        part.strip()
        for corpus in ("cnil-fr", "spf-fr")
        for doc in load_benchmark(SHARED_BENCH / corpus).docs.values()
        for part in re.split(r"\n\s*\n|(?<=[.!?])\s{2,}", doc.text)
        if 20 <= len(part.split()) <= 160
    ]
    titles = [
        doc.title
        for corpus in ("cnil-fr", "spf-fr")
        for doc in load_benchmark(SHARED_BENCH / corpus).docs.values()
        if doc.title
    ]
    words = 0
    for i in range(notes):
        sections = []
        for _ in range(rng.randint(2, 4)):
            body = "\n\n".join(rng.sample(paragraphs, k=rng.randint(1, 2)))
            sections.append(f"## {rng.choice(titles)[:60]}\n\n{body}")
        link = f"\n\nVoir aussi [[Note {rng.randrange(i):05d}]]." if i else ""
        tag = rng.choice(["droit", "démarches", "données", "travail", "famille"])
        text = f"---\ntags: [{tag}]\n---\n# Note {i:05d}\n\n"
        text += "\n\n".join(sections) + link + "\n"
        folder = target / f"Dossier {i % 50:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"Note {i:05d}.md").write_text(text, encoding="utf-8")
        words += len(text.split())
    return words


# An OpenAI-compatible server on this machine: mlx-lm's own, serving the same bundled model with the same
# BLAS binding as the worker (llama.cpp and Ollama have no wheel here). ObsiRAG's openai backend talks to it.
_OPENAI_SERVER = (
    "import sys; from services.llm.mlx_backend import prefer_fast_blas; prefer_fast_blas(); "
    "from mlx_lm.server import main; sys.argv = ['mlx_lm.server', *sys.argv[1:]]; main()"
)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_openai_server(model: Path) -> tuple[subprocess.Popen[bytes], str]:
    """mlx_lm.server serving ``model`` on a free port, once it answers; returns the process and its …/v1 URL."""
    import httpx

    port = _free_port()
    command = [sys.executable, "-c", _OPENAI_SERVER, "--model", str(model), "--port", str(port)]
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                return server, url
        except httpx.HTTPError:
            pass  # still loading
        time.sleep(0.5)  # polling an observable condition
    server.kill()
    raise TimeoutError("mlx_lm.server did not come up")
