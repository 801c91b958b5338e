"""``obsirag model bench``: each model in use timed on this machine (issue #33, point 5), kept in
``<data>/model-bench.json``: the generation model's prompt-reading and writing rates (a fresh worker's context
budget starts from them instead of a guess), the embedding model's chunks/s and query latency, the reranker's
pairs/s."""

from __future__ import annotations

import json
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from services.config import Settings
from services.llm.backend import Backend
from services.llm.models import ChatMessage
from services.llm.serving import WARM_UP_TEXT
from services.retrieval.embedding import Embedder
from services.retrieval.reranker import Reranker

BENCH_FILE = "model-bench.json"
DECODE_TOKENS = 24
CHUNK = (
    "Le projet Atlas publie chaque semaine une carte des îlots de chaleur de la ville, calculée à partir des "
    "relevés de température des capteurs installés sur les toits et dans les parcs. "
) * 6  # ~180 e5 tokens: a chunk of the default size
CHUNKS = 32
QUERIES = 10


class Rates(BaseModel):
    role: str
    model: str
    backend: str | None = None
    prompt_tokens_per_s: float | None = None
    decode_tokens_per_s: float | None = None
    chunks_per_s: float | None = None
    query_ms: float | None = None
    pairs_per_s: float | None = None
    measured_at: str = ""


def bench_path(settings: Settings) -> Path:
    return settings.data_dir / BENCH_FILE


def read_bench(settings: Settings) -> list[Rates]:
    try:
        return [Rates.model_validate(item) for item in json.loads(bench_path(settings).read_text(encoding="utf-8"))]
    except (OSError, ValueError):
        return []


def write_bench(settings: Settings, measured: list[Rates]) -> None:
    kept = [old for old in read_bench(settings) if (old.role, old.model) not in {(m.role, m.model) for m in measured}]
    bench_path(settings).parent.mkdir(parents=True, exist_ok=True)
    data = [rates.model_dump() for rates in [*kept, *measured]]
    bench_path(settings).write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")


def measured_rates(settings: Settings, backend: Backend) -> tuple[float, float] | None:
    """(prompt, decode) tokens/s the bench measured for this backend's model, if it did."""
    for rates in read_bench(settings):
        same = rates.role == "generation" and (rates.backend, rates.model) == (backend.name, backend.model)
        if same and rates.prompt_tokens_per_s and rates.decode_tokens_per_s:
            return rates.prompt_tokens_per_s, rates.decode_tokens_per_s
    return None


def bench_generation(backend: Backend) -> Rates:
    """A ~300-token prompt read, then ``DECODE_TOKENS`` written (the model loaded first, not timed)."""
    backend.load()
    messages = [ChatMessage(role="system", content=WARM_UP_TEXT), ChatMessage(role="user", content="Résume.")]
    started = time.perf_counter()
    first = last = None
    text = backend.stream(messages, DECODE_TOKENS, 0.0)
    for _piece in text:
        last = time.perf_counter()
        first = first or last
    counts = text.counts
    reading = (first or time.perf_counter()) - started
    writing = (last or started) - (first or started)
    decoded = max(0, counts.completion_tokens - 1)
    return Rates(
        role="generation",
        model=backend.model,
        backend=backend.name,
        prompt_tokens_per_s=round(counts.prompt_tokens / reading, 1) if reading > 0 else None,
        decode_tokens_per_s=round(decoded / writing, 1) if writing > 0 and decoded else None,
        measured_at=_now(),
    )


def bench_embedding(embedder: Embedder) -> Rates:
    embedder.encode([CHUNK])  # the first call pays for lazy set-up
    started = time.perf_counter()
    embedder.encode([f"{CHUNK} {i}" for i in range(CHUNKS)])
    chunks_per_s = CHUNKS / (time.perf_counter() - started)
    times = []
    for i in range(QUERIES):
        began = time.perf_counter()
        embedder.encode_query(f"où en est la carte des îlots de chaleur {i} ?")
        times.append((time.perf_counter() - began) * 1000)
    return Rates(
        role="embedding",
        model=embedder.name,
        chunks_per_s=round(chunks_per_s, 1),
        query_ms=round(statistics.median(times), 1),
        measured_at=_now(),
    )


def bench_reranker(reranker: Reranker) -> Rates:
    reranker.score("carte", [CHUNK])
    started = time.perf_counter()
    reranker.score("où en est la carte des îlots de chaleur ?", [f"{CHUNK} {i}" for i in range(30)])
    pairs_per_s = 30 / (time.perf_counter() - started)
    return Rates(role="reranking", model=reranker.name, pairs_per_s=round(pairs_per_s, 1), measured_at=_now())


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
