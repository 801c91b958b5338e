"""What the generation path costs: the mlx worker (Huey queue + Redis stream) against mlx-lm called directly.

In the same run, on the same model and prompt, alternately:

1. direct: ``mlx_lm.stream_generate`` in this process (greedy, the model loaded here);
2. through the worker: a real ``python -m workers.mlx_worker`` process on a private Redis, driven by
   ``GenerationClient.submit`` + ``stream`` and timed here, as the chat engine would see it.

Time to first token runs from the call (direct) or the submit (worker) to the first piece of text;
the decode rate is (tokens - 1) / (last token - first token). The figures are the medians over the
rounds, after one warm-up round each (the worker loads its model on its first request). Ratios are
direct / worker for time to first token and worker / direct for tokens/s: 1.0 means no overhead.
CPU seconds per token (this process, plus the worker process on its side) are recorded too: on a
shared machine other people's processes move wall-clock figures far more than CPU time.

    .venv/bin/python bench/generation_overhead.py                 # bundled SmolLM2-135M, 5 rounds
    .venv/bin/python bench/generation_overhead.py --model mlx-community/Qwen2.5-7B-Instruct-4bit
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from _common import ROOT, hermetic_environment, machine, print_table, write_results

TARGET_RATIO = 0.95
START_TIMEOUT = 120.0
SYSTEM = "Be brief."
QUESTION = "Write a long story about a cat who explores the roofs of Paris at night."


def main() -> None:
    args = parse_args()
    hermetic_environment()
    context = machine()  # the load average when the run starts
    from services.config import BUNDLED_LLM_MODEL, Settings
    from services.llm.bundled import ensure_converted
    from services.llm.models import ChatMessage
    from workers.redis_server import start_private_redis

    messages = [ChatMessage(role="system", content=SYSTEM), ChatMessage(role="user", content=QUESTION)]
    model = str(ensure_converted(args.cache)) if args.model == BUNDLED_LLM_MODEL else args.model
    with tempfile.TemporaryDirectory(prefix="obsirag-bench-gen-") as tmp:
        settings = Settings(vault=Path(tmp), data_dir=Path(tmp) / "data", llm_model=model)
        redis_server = start_private_redis(settings)
        settings = settings.model_copy(update={"redis_url": redis_server.url})
        worker = start_worker(settings)
        try:
            results = compare(settings, messages, args, worker.pid)
        finally:
            worker.terminate()
            worker.wait(30)
            redis_server.stop()
    report(results, args, context)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="bundled:smollm2-135m", help="bundled:…, a folder or a hub id")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "obsirag-bench-models")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--output", type=Path, help="result file (default bench/results/generation_overhead-*.json)")
    return parser.parse_args()


def start_worker(settings: Any) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.update(
        OBSIRAG_REDIS_URL=settings.redis_url,
        OBSIRAG_DATA_DIR=str(settings.data_dir),
        OBSIRAG_VAULT=str(settings.vault),
        OBSIRAG_LLM_MODEL=settings.llm_model,
        OBSIRAG_LOG_LEVEL="WARNING",
    )
    return subprocess.Popen([sys.executable, "-m", "workers.mlx_worker"], env=env, cwd=ROOT)


def compare(settings: Any, messages: list[Any], args: argparse.Namespace, worker_pid: int) -> dict[str, Any]:
    from services.llm.client import GenerationClient
    from services.llm.mlx_backend import prefer_system_blas
    from services.llm.models import GenerationRequest

    blas = prefer_system_blas() or "reference (mlx-cpu wheel)"  # the same BLAS as the worker's
    import mlx_lm
    from mlx_lm.sample_utils import make_sampler

    model, tokenizer = mlx_lm.load(settings.llm_model)
    prompt = tokenizer.apply_chat_template(
        [m.model_dump() for m in messages], add_generation_prompt=True, tokenize=False
    )
    sampler = make_sampler(temp=0.0)
    client = GenerationClient(settings)
    wait_for_worker(client)

    def direct() -> Iterator[tuple[str, int]]:
        for response in mlx_lm.stream_generate(model, tokenizer, prompt, args.max_tokens, sampler=sampler):
            yield response.text, response.generation_tokens

    ends: list[Any] = []  # the worker's done events: its own view of the time to first token

    def through_worker() -> Iterator[tuple[str, int]]:
        request = GenerationRequest(messages=messages, max_tokens=args.max_tokens)
        for event in client.stream(client.submit(request)):
            if event.kind == "error":
                raise RuntimeError(event.error)
            if event.kind == "done":
                ends.append(event)
            yield event.text, event.completion_tokens

    runs: dict[str, list[dict[str, Any]]] = {"direct": [], "worker": []}
    for round_index in range(args.rounds + 1):  # round 0 warms both up (the worker loads its model)
        clocks = {"direct": time.process_time, "worker": lambda: time.process_time() + process_cpu(worker_pid)}
        for name, generate in (("direct", direct), ("worker", through_worker)):
            run = timed(generate, clocks[name])
            if name == "worker":  # what the queue and the stream add: the caller's wait minus the worker's
                run["queue_and_stream_ms"] = run["ttft_ms"] - ends[-1].ttft_ms
            print(f"round {round_index} {name}: ttft {run['ttft_ms']:.0f} ms, {run['tokens_per_s']:.2f} tok/s")
            if round_index:
                runs[name].append(run)
    texts = {run["text"] for name in runs for run in runs[name]}
    return {"prompt_tokens": len(tokenizer.encode(prompt)), "runs": runs, "same_text": len(texts) == 1, "blas": blas}


def wait_for_worker(client: Any) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while client.state() is None:
        if time.monotonic() > deadline:
            raise SystemExit("the mlx worker did not start")
        time.sleep(0.1)


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of another process (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(generate: Callable[[], Iterator[tuple[str, int]]], cpu: Callable[[], float]) -> dict[str, Any]:
    cpu_start = cpu()
    start = time.perf_counter()
    first = None
    pieces, tokens = [], 0
    for text, count in generate():
        if text:
            first = first or time.perf_counter()
            pieces.append(text)
        tokens = max(tokens, count)
    last = time.perf_counter()  # the end of the stream: the final token, or the worker's done event
    cpu_s = cpu() - cpu_start
    assert first is not None, "no text generated"
    return {
        "cpu_s": cpu_s,
        "cpu_ms_per_token": cpu_s * 1000 / max(tokens, 1),
        "ttft_ms": (first - start) * 1000,
        "tokens": tokens,
        "tokens_per_s": (tokens - 1) / (last - first) if last > first else 0.0,
        "total_s": last - start,
        "text": "".join(pieces),
    }


def report(results: dict[str, Any], args: argparse.Namespace, context: dict[str, Any]) -> None:
    runs = results["runs"]
    summary = {
        name: {
            "ttft_ms": round(statistics.median(r["ttft_ms"] for r in runs[name]), 1),
            "tokens_per_s": round(statistics.median(r["tokens_per_s"] for r in runs[name]), 3),
            "cpu_ms_per_token": round(statistics.median(r["cpu_ms_per_token"] for r in runs[name]), 1),
            "queue_and_stream_ms": round(statistics.median(r.get("queue_and_stream_ms", 0.0) for r in runs[name]), 1),
            "tokens": runs[name][0]["tokens"],
        }
        for name in runs
    }
    ratios = {
        "tokens_per_s": round(summary["worker"]["tokens_per_s"] / summary["direct"]["tokens_per_s"], 3),
        "ttft": round(summary["direct"]["ttft_ms"] / summary["worker"]["ttft_ms"], 3),
    }
    cpu_ratio = round(summary["direct"]["cpu_ms_per_token"] / summary["worker"]["cpu_ms_per_token"], 3)
    print_table(
        ["path", "ttft ms", "tok/s", "CPU ms/token", "tokens"],
        [[name, s["ttft_ms"], s["tokens_per_s"], s["cpu_ms_per_token"], s["tokens"]] for name, s in summary.items()],
    )
    print(f"ratio worker/direct: tokens/s {ratios['tokens_per_s']:.3f}, time to first token {ratios['ttft']:.3f}")
    print(f"CPU per token, direct/worker: {cpu_ratio:.3f}")
    print(f"queue + stream share of the worker's time to first token: {summary['worker']['queue_and_stream_ms']} ms")
    print(f"target ≥ {TARGET_RATIO}: {'met' if min(ratios.values()) >= TARGET_RATIO else 'NOT met'}")
    print(f"same text on both paths: {results['same_text']}; BLAS: {results['blas']}")
    for name in runs:
        for run in runs[name]:
            run.pop("text")
    data = {
        "bench": "generation_overhead",
        "machine": context,
        "model": args.model,
        "max_tokens": args.max_tokens,
        "rounds": args.rounds,
        "prompt_tokens": results["prompt_tokens"],
        "blas": results["blas"],
        "summary": summary,
        "ratios": ratios,
        "cpu_ratio": cpu_ratio,
        "target": TARGET_RATIO,
        "same_text": results["same_text"],
        "runs": runs,
    }
    print(f"results: {write_results('generation_overhead', data, args.output)}")


if __name__ == "__main__":
    main()
