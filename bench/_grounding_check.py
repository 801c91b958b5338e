"""The model's second check in the grounding bench: through an OpenAI-compatible server, on the answers
the guard let through, and what it costs (its own time, and the answer's first token after it).

``--check-server URL`` uses a running server; ``--check-server bundled`` starts ``mlx_lm.server`` with the
bundled SmolLM2-135M (the only model on this machine: the figures say what the check costs, not what a
capable model would decide).
"""

from __future__ import annotations

import logging
import statistics
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from _beir import percentile
from _common import BENCH_DATA_ROOT, start_openai_server

from services.chat.grounding_check import check_request
from services.llm import bundled
from services.llm.client import Generator, StreamGenerator, backend_events
from services.llm.models import ChatMessage
from services.llm.openai_backend import OpenAIBackend

log = logging.getLogger("bench")
TIMEOUT = 60.0  # a check past it counts as failed (the guard's decision kept)


@contextmanager
def check_server(url: str, model: str | None) -> Iterator[tuple[OpenAIBackend, str]]:
    """The backend to ``url`` (``bundled``: a fresh mlx_lm.server with the bundled model), and its model."""
    server = None
    if url == "bundled":
        models = bundled.ensure_converted(BENCH_DATA_ROOT / "models")  # once per machine
        server, url = start_openai_server(models)
        model = str(models)
        log.info("mlx_lm.server with %s at %s", models.name, url)
    backend = OpenAIBackend(url, model or "default", timeout=TIMEOUT)
    try:
        yield backend, model or "default"
    finally:
        backend.unload()
        if server is not None:
            server.terminate()
            server.wait(30)


def generate_with(backend: OpenAIBackend) -> Generator:
    """The check's generations straight through ``backend`` (httpx's and the server's errors: a failed check)."""
    return StreamGenerator(backend_events(backend))


def after_check(rows: list[Any]) -> list[Any]:
    """The rows as the chat would end: an answer the model's check said "no" to is a refusal."""
    return [replace(r, answered=False, main=None, sources=[]) if r.check == "no" else r for r in rows]


def verdicts(rows: list[Any]) -> str:
    """How the check answered, per set, on the rows it ran on."""
    lines = ["| set | checks | yes | no | unreadable | failed |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for kind in ("answerable", "near", "far"):
        said = Counter(r.check for r in rows if r.kind == kind and r.check)
        total = sum(said.values())
        cells = " | ".join(f"{said[v]}" for v in ("yes", "no", "unreadable", "failed"))
        lines.append(f"| {kind} | {total} | {cells} |")
    return "\n".join(lines)


def latency(rows: list[Any]) -> str:
    times = [r.check_ms for r in rows if r.check]
    if not times:
        return "no check ran"
    return (
        f"the check's own time over {len(times)} checks: p50 {statistics.median(times):.0f} ms, "
        f"p95 {percentile(times, 0.95):.0f} ms, max {max(times):.0f} ms"
    )


def first_token_ms(backend: OpenAIBackend, messages: list[ChatMessage]) -> float:
    """Time to the answer's first token (1 token asked)."""
    started = time.perf_counter()
    for _piece in backend.stream(messages, 1, 0.0):
        break
    return (time.perf_counter() - started) * 1000


def prefix_probe(backend: OpenAIBackend, prompts: list[tuple[list[ChatMessage], str]]) -> dict[str, float]:
    """Does the check's prefix save the answer its reading? The first half of ``prompts``: the check, then
    the answer's first token (the server's prompt cache holds system + excerpts + question); the second
    half: the answer's first token with nothing of its excerpts read before. Prompts nothing sent before."""
    half = len(prompts) // 2
    checks, warm = [], []
    for messages, language in prompts[:half]:
        request = check_request(messages, language)
        started = time.perf_counter()
        "".join(backend.stream(request.messages, request.max_tokens, 0.0))
        checks.append((time.perf_counter() - started) * 1000)
        warm.append(first_token_ms(backend, messages))
    cold = [first_token_ms(backend, messages) for messages, _language in prompts[half:]]
    log.info("  probe: checks %s, answers after them %s, answers cold %s", checks, warm, cold)
    return {
        "prompts": len(prompts),
        "check_ms": round(statistics.median(checks), 1),
        "answer_first_token_after_check_ms": round(statistics.median(warm), 1),
        "answer_first_token_cold_ms": round(statistics.median(cold), 1),
    }
