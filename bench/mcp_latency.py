"""MCP overhead: ``search`` and ``read_note`` through the MCP server over stdio and over HTTP, next to the
same calls made directly, in one run on the same running system.

The supervisor of ``obsirag up`` runs the indexer, the watcher and the web process on a copy of the
sample vault. Then, on the same French queries and note paths, interleaved (each round calls every path
once, in a rotating order, so a busy machine slows all of them alike):

- direct: ``SystemClient.search`` (Huey search queue → indexer → result) in a worker thread and
  ``NoteReader.read`` (catalog and vault) on the event loop, in this process: what an MCP call does once
  it has been decoded, where the server does it;
- stdio: the official ``mcp`` client against ``obsirag mcp`` (a subprocess, as desktop clients launch it);
- http: the same client against ``/mcp`` on the web process (Streamable HTTP, one session).

Each call's CPU time is counted too, in this process (``time.process_time``) and in the server's
(``/proc/<pid>/task/*/schedstat``: the stdio subprocess, the web process): on a shared machine the
wall-clock figures carry the other processes' load, the CPU figures much less. ``search``'s CPU leaves out
the indexer's, the same work on every path.

The MCP figures are the client's whole call (encode, transport, the server's validation, the same work,
the result's JSON both ways, and the official client's check of the result against the tool's output
schema with ``jsonschema``, also timed on its own: a cost of that client, which others may not pay).
Target: MCP adds < 5 ms at p95.

    .venv/bin/python bench/mcp_latency.py                 # 200 rounds (~2 min plus start-up)
    .venv/bin/python bench/mcp_latency.py --rounds 50
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from _common import ROOT, SAMPLE_VAULT, french_sentences, hermetic_environment, machine, percentiles, print_table
from _common import write_results as save
from _system import start_system, stop_system, wait_until_ready

TARGET_OVERHEAD_MS = 5.0
WORKERS = ("indexer", "watcher", "web")
WARM_UP_ROUNDS = 10
K = 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    hermetic_environment()
    os.environ["OBSIRAG_MCP_RATE_LIMIT"] = "1000000"  # the bench calls faster than the default 120 a minute
    from services.config import Settings

    root = Path(tempfile.mkdtemp(prefix="obsirag-mcp-bench-"))
    shutil.copytree(SAMPLE_VAULT, root / "vault")
    settings = Settings(vault=root / "vault", data_dir=root / "data", port=0)
    log = root / "system.log"
    process = start_system(settings, WORKERS, log)
    try:
        samples = anyio.run(_measure, settings, process, log, args.rounds)
    finally:
        stop_system(process)
        shutil.rmtree(root, ignore_errors=True)
    report(samples, args.rounds, args.output)


async def _measure(settings: Any, process: Any, log: Path, rounds: int) -> dict[str, list[float]]:
    import httpx2
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client

    from services.mcp.tools import VaultTools
    from services.retrieval.search import SearchRequest

    _time_client_validation()
    tools = VaultTools(settings)
    wait_until_ready(tools.client, process, WORKERS, log)
    _wait_indexed(tools)
    url = _web_url(tools) + "mcp"
    where = ["--vault", str(settings.vault), "--data", str(settings.data_dir)]
    stdio = StdioServerParameters(command=sys.executable, args=["-m", "workers.cli", "mcp", *where], cwd=ROOT)
    queries = french_sentences()[: max(rounds, 1)]
    paths = [r.path for r in tools.catalog.list_notes()]
    samples: dict[str, list[float]] = {}
    web_pid = tools.client.status().process("web").pid  # type: ignore[union-attr]
    async with (
        Client(stdio) as over_stdio,
        httpx2.AsyncClient(timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as over_http,
    ):
        for n in range(WARM_UP_ROUNDS + rounds):
            query, path = queries[n % len(queries)], paths[n % len(paths)]
            calls: dict[str, Callable[[], Awaitable[Any]]] = {
                "search direct": _sync(lambda q=query: tools.client.search(SearchRequest(query=q, k=K))),
                "search stdio": lambda q=query: _tool(over_stdio, "search", {"query": q, "k": K}),
                "search http": lambda q=query: _tool(over_http, "search", {"query": q, "k": K}),
                "read_note direct": _on_loop(lambda p=path: tools.notes.read(p)),
                "read_note stdio": lambda p=path: _tool(over_stdio, "read_note", {"path": p}),
                "read_note http": lambda p=path: _tool(over_http, "read_note", {"path": p}),
            }
            names = list(calls)
            servers = {"stdio": _stdio_pid(), "http": web_pid}
            for name in names[n % len(names) :] + names[: n % len(names)]:  # a rotating order
                _VALIDATION.clear()
                server = servers.get(name.split()[-1])
                cpu, served = _cpu_ms(server), _cpu_ms(server, own=False)
                started = time.perf_counter()
                await calls[name]()
                elapsed = (time.perf_counter() - started) * 1000
                if n >= WARM_UP_ROUNDS:
                    samples.setdefault(name, []).append(elapsed)
                    samples.setdefault(f"{name} cpu", []).append(_cpu_ms(server) - cpu)
                    samples.setdefault(f"{name} server cpu", []).append(_cpu_ms(server, own=False) - served)
                    if _VALIDATION:
                        samples.setdefault(f"{name} validation", []).append(sum(_VALIDATION))
    tools.close()
    return samples


_VALIDATION: list[float] = []  # ms the client spent checking the last result against the output schema


def _time_client_validation() -> None:
    from mcp.client.session import ClientSession

    check = ClientSession.validate_tool_result

    async def timed(self: Any, name: str, result: Any) -> None:
        started = time.perf_counter()
        await check(self, name, result)
        _VALIDATION.append((time.perf_counter() - started) * 1000)

    ClientSession.validate_tool_result = timed  # type: ignore[method-assign]


def _stdio_pid() -> int | None:
    """The ``obsirag mcp`` subprocess (this process's child running ``workers.cli mcp``)."""
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            if b"mcp" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                return int(pid)
    return None


def _cpu_ms(server: int | None, own: bool = True) -> float:
    """CPU milliseconds used so far by this process (``own``) and, when given, by the server process."""
    used = time.process_time() * 1000 if own else 0.0
    if server is not None:
        tasks = Path(f"/proc/{server}/task")
        used += sum(int((t / "schedstat").read_text().split()[0]) for t in tasks.iterdir()) / 1e6
    return used


def _sync(fn: Callable[[], Any]) -> Callable[[], Awaitable[Any]]:
    # In a worker thread, as the MCP server runs search: the loop keeps serving the clients' tasks.
    async def call() -> Any:
        return await anyio.to_thread.run_sync(fn)

    return call


def _on_loop(fn: Callable[[], Any]) -> Callable[[], Awaitable[Any]]:
    # On the event loop, as the MCP server runs read_note (services.mcp.server, ``on_loop``).
    async def call() -> Any:
        return fn()

    return call


async def _tool(client: Any, name: str, arguments: dict[str, Any]) -> Any:
    result = await client.call_tool(name, arguments)
    if result.is_error:
        raise RuntimeError(f"{name} failed: {result.content[0].text}")
    return result


def _wait_indexed(tools: Any, timeout: float = 600.0) -> None:
    from services.catalog.models import NoteStatus
    from services.vault import iter_vault_paths

    total = len(list(iter_vault_paths(tools.settings.vault, [])))
    deadline = time.monotonic() + timeout
    while tools.catalog.status_counts().get(NoteStatus.INDEXED, 0) < total:
        if time.monotonic() > deadline:
            raise RuntimeError("the sample vault was not indexed in time")
        time.sleep(0.5)  # polling the catalog: there is no event to wait on


def _web_url(tools: Any) -> str:
    deadline = time.monotonic() + 120
    while (url := tools.client.status().web_url) is None:
        if time.monotonic() > deadline:
            raise RuntimeError("the web process published no URL")
        time.sleep(0.2)
    return url if url.endswith("/") else url + "/"


def report(samples: dict[str, list[float]], rounds: int, output: Path | None) -> None:
    stats = {name: percentiles(values) for name, values in samples.items()}
    rows = []
    for tool in ("search", "read_note"):
        direct = stats[f"{tool} direct"]
        for transport in ("direct", "stdio", "http"):
            s = stats[f"{tool} {transport}"]
            added = "" if transport == "direct" else f"{s['p95'] - direct['p95']:+.2f}"
            added_p50 = "" if transport == "direct" else f"{s['p50'] - direct['p50']:+.2f}"
            check = stats.get(f"{tool} {transport} validation", {}).get("p50", "")
            cpu = stats[f"{tool} {transport} cpu"]["mean"]
            rows.append([tool, transport, s["p50"], s["p95"], s["p99"], added_p50, added, cpu, check])
    headers = [
        "tool",
        "path",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "MCP adds at p50 ms",
        "MCP adds at p95 ms",
        "CPU ms/call (mean)",
        "client schema check p50 ms",
    ]
    print_table(headers, rows)
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    data = {"machine": machine(), "rounds": rounds, "target_overhead_ms": TARGET_OVERHEAD_MS, "stats": stats}
    print(f"results: {save('mcp_latency', data, output)}")


if __name__ == "__main__":
    main()
