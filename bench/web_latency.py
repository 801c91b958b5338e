"""Web UI latency: server time of the note viewer, the graph page (1k and 5k notes) and the dashboard, and
the time from submitting a question to its first token in the browser, minus the model's own first-token time.

1. Server time: the real app (``web.app.create_app``) in this process, called through Litestar's test
   client (no network), on a vault of N notes (the sample vault plus varied copies of its notes, links
   included) whose catalog rows and links are written as the indexer writes them, with a private Redis
   for the dashboard's queue and history reads. Cold graph build (in a child process, with its export) timed apart; the
   page figures are warm (graph cached until the catalog changes), over varied filters. The graph
   page is also served over HTTP (uvicorn) to Chromium: load → SVG drawn, force layout included.
2. Browser: ``obsirag up`` on the sample vault with the default settings (bundled model, default
   context and answer length; fake web search, learner off so nothing competes), Chromium through
   Playwright; each question's submit time, first progress shown ("Lecture des extraits…"), first
   streamed token and complete answer are taken in the page (``performance.now()``), the model's
   first-token time comes from the worker (``ttft_ms``). The first question is the acceptance one
   asked on a fresh system (model load included); then it is asked again, fresh, and followed up in
   the same thread: the follow-up's time to first token against the fresh question's shows the
   prompt cache.

    .venv/bin/python bench/web_latency.py                          # 1k and 5k notes, 3 questions (~15 min)
    .venv/bin/python bench/web_latency.py --sizes 1000 --questions 0  # no chat (graph still drawn)
    .venv/bin/python bench/web_latency.py --no-browser                # server times only
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from subprocess import DEVNULL
from typing import Any
from urllib.parse import quote

from _common import (
    BENCH_DATA_ROOT,
    ROOT,
    SAMPLE_VAULT,
    hermetic_environment,
    machine,
    percentiles,
    print_table,
    start_openai_server,
    variant_vault,
)
from _common import write_results as save

from services import vault
from services.catalog import Catalog
from services.catalog.models import NoteRecord, NoteStatus
from services.config import Settings
from services.llm import bundled
from services.vault.models import ParsedNote

RECORD_FIELDS = set(NoteRecord.model_fields) & set(ParsedNote.model_fields)  # what a note says of itself
GRAPH_FILTERS = ["", "?folder=Projets", "?q=atlas", "?tag=cuisine", "?days=30", "?type=note"]  # ≤ 300 nodes each
QUESTIONS = [
    "Quels sont les objectifs du projet Atlas ?",
    "Comment nourrir un levain ?",
    "Qui est Claire Dubois ?",
    "Quelles sont mes habitudes Git ?",
    "Que dit Montaigne de l'amitié ?",
]


def fill_catalog(settings: Settings) -> int:
    """Catalog rows and resolved links for every note, as the indexer writes them (no embeddings)."""
    catalog = Catalog(settings.catalog_path)
    now = datetime.now(UTC)
    count = 0
    for path in vault.iter_vault_paths(settings.vault, []):
        note = vault.read_note(settings.vault, path, settings.max_file_bytes)
        fields = note.model_dump(include=RECORD_FIELDS)
        catalog.upsert_note(NoteRecord(**fields, status=NoteStatus.INDEXED, chunk_count=1, indexed_at=now))
        catalog.replace_links(note.path, note.links)
        count += 1
    catalog.resolve_links(["Attachments/schema-atlas.png"])
    catalog.close()
    return count


def timed(call: Callable[[], Any], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = call()
        samples.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.status_code
    return samples


def server_times(size: int, requests: int, redis_url: str, draw: bool = False) -> dict[str, Any]:
    from litestar.testing import TestClient

    from web.app import create_app

    with tempfile.TemporaryDirectory(prefix="obsirag-web-bench-") as tmp:
        root = Path(tmp)
        paths = variant_vault(root / "vault", size)
        shutil.copytree(SAMPLE_VAULT / "Attachments", root / "vault" / "Attachments", dirs_exist_ok=True)
        settings = Settings(vault=root / "vault", data_dir=root / "data", redis_url=redis_url)
        notes = fill_catalog(settings)
        rng = random.Random(size)
        with TestClient(create_app(settings)) as client:
            cold = {page: timed(lambda page=page: client.get(page), 1)[0] for page in ("/graph", "/notes", "/admin")}
            graph = [s for f in GRAPH_FILTERS for s in timed(lambda f=f: client.get(f"/graph{f}"), requests // 6 + 1)]
            graph_1000 = timed(lambda: client.get("/graph?limit=1000"), requests // 4)
            viewer = timed(lambda: client.get(f"/notes/{quote(rng.choice(paths))}"), requests)
            dashboard = timed(lambda: client.get("/admin"), requests // 2)
            live = timed(lambda: client.get("/admin/live"), requests // 2)
            picker = timed(lambda: client.get(f"/notes?letter={rng.choice('ACDELMPRST')}"), requests // 4)
        drawn = graph_in_browser(create_app(settings)) if draw else {}
    return {
        "notes": notes,
        "graph_cold_ms": round(cold["/graph"], 1),  # a child process: the build + JSON export, once per catalog change
        "picker_cold_ms": round(cold["/notes"], 1),
        "dashboard_first_ms": round(cold["/admin"], 1),
        "graph": percentiles(graph),
        "graph_1000_nodes": percentiles(graph_1000),
        "note_viewer": percentiles(viewer),
        "dashboard": percentiles(dashboard),
        "dashboard_refresh": percentiles(live),
        "note_picker": percentiles(picker),
        "graph_drawn_in_browser_ms": drawn,
    }


def graph_in_browser(app: Any, limits: tuple[int, ...] = (300, 2000), repeat: int = 3) -> dict[str, float]:
    """Load → SVG drawn (layout included) in Chromium, for the default and the largest node limit."""
    import uvicorn
    from playwright.sync_api import sync_playwright

    from workers.web import bind, url_of

    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    drawn: dict[str, float] = {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--disable-gpu"])
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            for limit in limits:
                samples = []
                for _ in range(repeat):
                    page.goto(f"{url_of(sock)}graph?limit={limit}")
                    page.wait_for_selector("#graph-canvas svg", timeout=120_000)
                    samples.append(page.evaluate("performance.now()"))  # since this page's navigation began
                drawn[str(limit)] = round(sorted(samples)[len(samples) // 2], 1)
            browser.close()
    finally:
        server.should_exit = True
        thread.join(10)
    return drawn


def browser_first_token(questions: int, openai_server: bool = False) -> dict[str, Any]:
    """Submit → first token in Chromium, and the model's own time to first token, per question."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="obsirag-web-bench-") as tmp:
        root = Path(tmp)
        shutil.copytree(SAMPLE_VAULT, root / "vault")
        env = {
            "OBSIRAG_PORT": "0",
            "OBSIRAG_WEB_SEARCH_BACKEND": "fake",
            "OBSIRAG_LEARN_ENABLED": "false",
            "PYTHONUNBUFFERED": "1",
        }
        settings = Settings(vault=root / "vault", data_dir=root / "data", data_root=BENCH_DATA_ROOT)
        models = bundled.ensure_converted(settings.model_cache)  # once per machine, shared by the benches
        env["OBSIRAG_DATA_ROOT"] = str(BENCH_DATA_ROOT)
        server = None
        if openai_server:
            server, url = start_openai_server(models)
            env |= {"OBSIRAG_LLM_BACKEND": "openai", "OBSIRAG_LLM_BASE_URL": url, "OBSIRAG_LLM_MODEL": str(models)}
        command = [sys.executable, "-m", "workers.cli", "up", "--vault", str(root / "vault")]
        command += ["--data", str(settings.data_dir)]
        process = subprocess.Popen(command, env={**_base_env(), **env}, cwd=ROOT, stdout=DEVNULL, stderr=DEVNULL)
        try:
            url = _wait_for_system(settings)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--disable-gpu"])
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(url)
                runs = [_ask(page, q) for q in QUESTIONS[: questions + 1]]
                fresh = _ask(page, QUESTIONS[0])
                follow_up = _ask(page, FOLLOW_UP, new_thread=False)
                browser.close()
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(90)
            if server is not None:
                server.terminate()
                server.wait(30)
    measured = runs[1:]  # the first question loads the model: reported apart
    # A refused question never reaches the model (no ttft): it counts in the browser's figure only.
    generated = [r for r in measured if r["model_ttft_ms"] == r["model_ttft_ms"]]
    overhead = [r["browser_first_token_ms"] - r["model_ttft_ms"] for r in generated]
    return {
        "warmup": runs[0],
        "fresh": fresh,
        "follow_up": follow_up,
        "follow_up_ttft_ratio": round(follow_up["model_ttft_ms"] / fresh["model_ttft_ms"], 3),
        "runs": measured,
        "browser_first_token": percentiles([r["browser_first_token_ms"] for r in measured]),
        "model_ttft": percentiles([r["model_ttft_ms"] for r in generated]),
        "overhead": percentiles(overhead),
    }


FOLLOW_UP = "et quel est son calendrier ?"
WATCH = """() => {
  window.__first = null;
  window.__progress = null;
  const turns = document.querySelectorAll(".turn").length;
  new MutationObserver(() => {
    const turn = document.querySelectorAll(".turn")[turns];
    if (!turn) return;
    const progress = turn.querySelector(".progress");
    if (window.__progress === null && progress && progress.textContent.includes("Lecture des extraits"))
      window.__progress = performance.now();
    if (window.__first === null && turn.querySelector(".answer-body.streaming span"))
      window.__first = performance.now();
  }).observe(document.getElementById("thread"), { childList: true, subtree: true, characterData: true });
}"""


def _ask(page: Any, question: str, new_thread: bool = True) -> dict[str, Any]:
    if new_thread:
        page.goto(page.url.split("?")[0])
    answers = page.locator(".answer-body.final").count()
    page.evaluate(WATCH)
    page.fill("#question", question)
    submitted = page.evaluate("performance.now()")
    page.get_by_role("button", name="Envoyer").click()
    final = page.locator(".answer-body.final").nth(answers)
    final.wait_for(timeout=600_000)
    done = page.evaluate("performance.now()")
    first, progress = page.evaluate("window.__first"), page.evaluate("window.__progress")
    model = float(final.get_attribute("data-model-ttft-ms") or "nan")
    return {
        "question": question,
        "progress_shown_ms": round(progress - submitted, 1) if progress is not None else None,
        "browser_first_token_ms": round(first - submitted, 1) if first is not None else None,
        "done_ms": round(done - submitted, 1),
        "model_ttft_ms": round(model, 1),
        "answer_chars": len(final.inner_text()),
    }


def _base_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("OBSIRAG_")}


def _wait_for_system(settings: Settings, timeout: float = 600.0) -> str:
    import redis

    from services.system.processes import read_process

    client = redis.Redis.from_url(settings.effective_redis_url)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            web, indexer = read_process(client, "web"), read_process(client, "indexer")
            counts = Catalog(settings.catalog_path).status_counts() if settings.catalog_path.exists() else {}
            if web and indexer and counts.get(NoteStatus.INDEXED, 0) >= 40:
                return str(web.details["url"])
        except (redis.ConnectionError, FileNotFoundError):
            pass  # not up yet
        time.sleep(0.5)  # polling an observable condition
    raise TimeoutError("the system did not come up")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 5000])
    parser.add_argument("--requests", type=int, default=140, help="requests per page and size")
    parser.add_argument("--questions", type=int, default=3, help="chat questions after the warm-up one")
    parser.add_argument("--no-browser", action="store_true", help="server times only (no Chromium)")
    parser.add_argument("--chat-only", action="store_true", help="only the browser chat (no server times)")
    parser.add_argument(
        "--openai-server", action="store_true", help="chat through the openai backend and mlx_lm.server (same model)"
    )
    args = parser.parse_args()
    hermetic_environment()
    from workers.redis_server import start_private_redis

    results: dict[str, Any] = {"machine": machine(), "server": {}}
    with tempfile.TemporaryDirectory(prefix="obsirag-redis-") as tmp:
        server = start_private_redis(Settings(vault=Path(tmp), data_dir=Path(tmp)))
        try:
            for size in [] if args.chat_only else args.sizes:
                results["server"][str(size)] = server_times(size, args.requests, server.url, draw=not args.no_browser)
        finally:
            server.stop()
    rows = []
    for size, figures in results["server"].items():
        for page in ("note_viewer", "graph", "graph_1000_nodes", "dashboard", "dashboard_refresh", "note_picker"):
            stats = figures[page]
            rows.append([f"{page} ({size} notes)", stats["n"], stats["p50"], stats["p95"], stats["max"]])
        for name in ("graph_cold_ms", "picker_cold_ms"):
            rows.append([f"{name.removesuffix('_ms')} ({size} notes)", 1, figures[name], "", ""])
        for limit, ms in figures["graph_drawn_in_browser_ms"].items():
            rows.append([f"graph drawn in Chromium, {limit} nodes ({size} notes)", 3, ms, "", ""])
    print_table(["server time, ms", "n", "p50", "p95", "max"], rows)
    if args.questions and not args.no_browser:
        results["browser"] = browser_first_token(args.questions, args.openai_server)
        browser = results["browser"]
        print_table(
            ["browser, ms", "p50", "p95"],
            [
                [name, browser[name]["p50"], browser[name]["p95"]]
                for name in ("browser_first_token", "model_ttft", "overhead")
            ],
        )
        for name in ("warmup", "fresh", "follow_up"):
            print(f"{name}: {browser[name]}")
        print(f"follow-up / fresh model time to first token: {browser['follow_up_ttft_ratio']} (target ≤ 0.5)")
    print(f"results: {save('web_latency', results)}")


if __name__ == "__main__":
    main()
